"""The rehearsal's target: a Transformers-shaped git repository from the real 5.23.0 source distribution."""

from __future__ import annotations

import re
import shutil
import tarfile
from pathlib import Path

from tests.conftest import ROOT
from tests.e2e.checkout import commit_all, git, write

SDIST = ROOT / ".ci" / "cache" / "transformers-5.23.0.tar.gz"  # scripts/transformers-sdist.sh caches it
VERSION = "5.24.0.dev0"
HERE = Path(__file__).resolve().parent
PROTOCOL = ROOT / "tests" / "fixtures" / "transformers_checkout" / "tests"
# The export test module a Transformers checkout holds (upstream's shape: skip tables, scope walk,
# one test method per cell): the checkout's own tests judge every cell (docs/runner.md).
EXPORT_TESTS = ROOT / "tests" / "fixtures" / "transformers_checkout_export" / "tests"
CALLERS = ROOT / "examples" / "transformers" / ".github" / "workflows"
MODELING_BERT = "src/transformers/models/bert/modeling_bert.py"
# A skip the nightly probe finds obsolete: BertForSequenceClassification exports with dynamic shapes.
SKIPS = """[dynamic]
BertForSequenceClassification = "Dynamic sequence length once broke the pooler. TODO: recheck."
"""
# The configuration a Transformers maintainer writes; backends and min-passes keep the rehearsal short.
CONFIG = """
[tool.export-bot]
skiplists = "skiplists"
source = "transformers-tests:."
backends = ["dynamo"]
min-passes = 1
github-retries = 2
github-backoff = 0.01
github-write-interval = 0
"""
# What an adopter may set on a caller job: one shard is enough for a handful of cells. The PR check
# runs with other inputs than the defaults too: one worker, an extra package, a self-hosted label list.
HEAVY_LABELS = '["self-hosted", "linux", "x64"]'
CALLER_INPUTS = {
    "export-conformance.yml": {
        "shards": 1,
        "workers": 1,
        "extra-packages": "httpx",
        "runs-on-heavy": f"'{HEAVY_LABELS}'",
    },
    "export-baseline.yml": {"shards": 1},
}


def make_target(
    repo: Path,
    *,
    config: str = CONFIG,
    skips: str = SKIPS,
    caller_inputs: dict[str, dict[str, object]] = CALLER_INPUTS,
    tester_extra: str = "",
) -> str:
    """Unpack the sdist into `repo`, make it 5.24.0.dev0 with our tests/models fixture, commit `main`; its SHA.

    `config` is appended to its pyproject, `skips` is its export_skips.toml, `caller_inputs` are
    added to the callers' `with:` and `tester_extra` to the BERT tester module.
    """
    if not SDIST.is_file():
        raise AssertionError(f"{SDIST} is missing: run `bash scripts/transformers-sdist.sh` (scripts/test.sh does)")
    with tarfile.open(SDIST) as archive:
        archive.extractall(repo.parent / "sdist", filter="data")
    shutil.move(repo.parent / "sdist" / "transformers-5.23.0", repo)
    for path, pattern in (
        ("setup.py", r'version="5\.23\.0"'),
        ("src/transformers/__init__.py", r'__version__ = "5\.23\.0"'),
    ):
        text = (repo / path).read_text(encoding="utf-8")
        bumped, count = re.subn(pattern, lambda m: m.group(0).replace("5.23.0", VERSION), text)
        assert count == 1, f"{path}: the version line moved in the sdist"
        (repo / path).write_text(bumped, encoding="utf-8")
    # Upstream's tests are not in the sdist's tests/models: the tester protocol, the export test
    # module and one tiny tester.
    for name in ("__init__.py", "test_modeling_common.py", "test_export_common.py", "models/__init__.py"):
        write(repo / "tests" / name, (PROTOCOL / name).read_text(encoding="utf-8"))
    for name in ("test_export_common.py", "exporters/__init__.py", "exporters/test_export.py"):
        write(repo / "tests" / name, (EXPORT_TESTS / name).read_text(encoding="utf-8"))
    write(repo / "tests/models/bert/__init__.py", "")
    tester = (HERE / "fixture" / "test_modeling_bert.py").read_text()
    write(repo / "tests/models/bert/test_modeling_bert.py", tester + tester_extra)
    write(repo / "skiplists/export_skips.toml", skips)
    shutil.copy(ROOT / "skiplists" / "onnx_disable_optimize.toml", repo / "skiplists" / "onnx_disable_optimize.toml")
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + config, encoding="utf-8")
    for caller in CALLERS.glob("*.yml"):
        text = caller.read_text(encoding="utf-8")
        write(repo / ".github" / "workflows" / caller.name, with_inputs(text, caller_inputs.get(caller.name, {})))
    write(repo / ".gitignore", "__pycache__/\n*.egg-info/\n.export-bot/\n")
    git(repo, "init", "-q", "-b", "main")
    return commit_all(repo, f"transformers {VERSION} (from the 5.23.0 sdist) with export-bot")


def with_inputs(caller: str, inputs: dict[str, object]) -> str:
    """The caller's job passing `inputs` too: an input it passes already (a released pin's callers pass
    their defaults) is replaced in its `with:` block, the others are added before `bot-ref:`."""
    head, start, tail = caller.partition("      bot-ref:")
    for key, value in inputs.items():
        line = re.compile(rf"^      {re.escape(key)}: [^\n]*$", re.M)
        entry = f"      {key}: {value}"
        tail, replaced = line.subn(entry, tail, 1)
        if not replaced:
            head += f"{entry}\n"
    return head + start + tail


def branch(repo: Path, name: str, edits: dict[str, str], message: str, start: str = "main") -> str:
    """A branch off `start` with `edits` (path → new text) committed; returns its head SHA; leaves main checked out."""
    git(repo, "checkout", "-q", "-b", name, start)
    for path, text in edits.items():
        write(repo / path, text)
    sha = commit_all(repo, message)
    git(repo, "checkout", "-q", "main")
    return sha


def merge_ref(repo: Path, number: int, head: str, base: str = "main") -> str:
    """GitHub's test merge of `head` into `base` at refs/pull/<number>/merge (recomputed when either moves)."""
    tree = git(repo, "merge-tree", "--write-tree", base, head)
    sha = git(repo, "commit-tree", tree, "-p", base, "-p", head, "-m", f"Merge {head} into {base}")
    git(repo, "update-ref", f"refs/pull/{number}/merge", sha)
    return sha


def break_bert_forward(repo: Path) -> str:
    """modeling_bert.py with one data-dependent branch in BertModel.forward: export cannot trace it."""
    return _into_bert_forward(
        repo,
        "        if input_ids is not None and int(input_ids.max()) < 0:\n"
        '            raise ValueError("negative token ids")\n',
    )


SLOWDOWN = 15  # seconds BertModel.forward sleeps while it is exported: drift's default needs ×2 and +5 s, and a
# loaded runner (two jobs on two cores) can time the base's test at several seconds: 6 s was missed there


def slow_bert_export(repo: Path) -> str:
    """modeling_bert.py whose BertModel exports several times slower, every output unchanged (eager is not slowed)."""
    return _into_bert_forward(
        repo,
        f"        if torch.compiler.is_exporting():\n            import time\n\n            time.sleep({SLOWDOWN})\n",
    )


def _into_bert_forward(repo: Path, lines: str) -> str:
    """modeling_bert.py with `lines` first in BertModel.forward's body."""
    text = (repo / MODELING_BERT).read_text(encoding="utf-8")
    start = text.index("class BertModel(")
    match = re.compile(r"\n    def forward\(\n(?:.*\n)*?    \)(?: -> [^\n]*)?:\n").search(text, start)
    assert match, "BertModel.forward moved in the sdist"
    body = match.end()
    return text[:body] + lines + text[body:]
