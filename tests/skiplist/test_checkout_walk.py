"""explain, lint and proposals follow the scopes a checkout's own export module walks, read through the AST."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cells import Cell
from bot.cli import main
from bot.diff.model import write_report
from bot.scopes import BOT_WALK, exactness_scopes, known_scopes, skip_scopes
from bot.skiplist.checkout_walk import WalkUnreadable, read_walk
from tests.propose.helpers import outcomes, propose_at, report, row, skiplists_dir

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# Upstream's walk as of its newest module: an `in_graph`/`off_graph` generate axis, `.exactness` derived.
UPSTREAM_WALK = '''
class ExportTesterMixin:
    def _export_scopes(self, generate=False, dynamic=False, backend=None, static_cache=False, off_graph_cache=False):
        """The scopes, broad to specific."""
        scopes = ["all"]
        if generate:
            scopes.append("generate")
            if dynamic:
                scopes.append("generate.dynamic")
        scopes.append("dynamic" if dynamic else "static")
        if static_cache:
            scopes.append("static-cache")
        if backend:
            scopes.append(backend)
            if generate:
                scopes.append(f"{backend}.generate")
                scopes.append(f"{backend}.generate.{'off_graph' if off_graph_cache else 'in_graph'}")
            scopes.append(f"{backend}.dynamic" if dynamic else f"{backend}.static")
            if static_cache:
                scopes.append(f"{backend}.static-cache")
        return scopes

    def _should_skip_exactness(self, model_class, generate=False, dynamic=False, backend=None):
        scopes = self._export_scopes(generate=generate, dynamic=dynamic, backend=backend)
        scopes = ["exactness" if scope == "all" else f"{scope}.exactness" for scope in scopes]
        return any(model_class.__name__ in EXPORT_SKIPS.get(scope, {}) for scope in scopes)
'''


def checkout(root: Path, module: str | None = None, *, fixture: str | None = None) -> Path:
    (root / "tests" / "exporters").mkdir(parents=True)
    target = root / "tests" / "exporters" / "test_export.py"
    if fixture:
        shutil.copy(FIXTURES / fixture / "tests" / "exporters" / "test_export.py", target)
    else:
        target.write_text(textwrap.dedent(module or ""), encoding="utf-8")
    return root


@pytest.fixture
def next_version(tmp_path) -> Path:
    return checkout(tmp_path / "next", fixture="transformers_checkout_next")


def invoke(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_the_next_version_walks_backend_prefixed_scopes_only(next_version):
    walk = read_walk(next_version)
    assert walk.skip(Cell.parse("LlamaForCausalLM::test_torch_export_generate_dynamic_multi_token")) == [
        "dynamo",
        "dynamo.generate",
        "dynamo.dynamic",
    ]
    assert walk.skip(Cell.parse("BertModel::test_executorch_export_static_xnnpack")) == [
        "executorch",
        "executorch.static",
        "xnnpack",
        "xnnpack.static",
    ]
    assert {"all", "generate", "dynamic", "static"}.isdisjoint(walk.known)
    assert {"onnx.generate", "dynamo.dynamic", "mlx.static"} <= set(walk.known)
    assert walk.exactness(Cell.parse("BertModel::test_onnx_export_dynamic")) is None  # the version dropped them


def test_upstreams_newest_walk_is_read_with_its_exactness_twins_and_new_axis(tmp_path):
    walk = read_walk(checkout(tmp_path, UPSTREAM_WALK))
    cell = Cell.parse("LlamaForCausalLM::test_onnx_export_generate_dynamic")
    assert walk.skip(cell) == [
        "all",
        "generate",
        "generate.dynamic",
        "dynamic",
        "onnx",
        "onnx.generate",
        "onnx.generate.in_graph",
        "onnx.dynamic",
    ]
    assert walk.exactness(cell)[:2] == ["exactness", "generate.exactness"]
    assert "onnx.generate.off_graph" in walk.known and "onnx.generate.off_graph.exactness" in walk.known
    # The forward walk of a backend cell is the seed's: the version differs where it says it does.
    forward = Cell.parse("BertModel::test_onnx_export_static")
    assert walk.skip(forward) == skip_scopes(forward)


def test_the_scope_functions_follow_the_walk_they_are_given_and_the_seeds_without_one(next_version):
    cell = Cell.parse("BertModel::test_onnx_export_dynamic")
    seed = (skip_scopes(cell), exactness_scopes(cell), known_scopes())
    walk = read_walk(next_version)
    assert skip_scopes(cell, walk) == ["onnx", "onnx.dynamic"] and exactness_scopes(cell, walk) is None
    assert "all" not in known_scopes(walk)
    assert (skip_scopes(cell), exactness_scopes(cell), known_scopes()) == seed
    assert seed == (skip_scopes(cell, BOT_WALK), exactness_scopes(cell, BOT_WALK), known_scopes(BOT_WALK))


@pytest.mark.parametrize(
    "module, why",
    [
        ("def _export_scopes(self, backend=None):\n    return SCOPES[backend]\n", "a `Subscript` expression"),
        ("def _export_scopes(self):\n    import os\n    return ['all']\n", "a `Import` statement"),
        ("def _export_scopes(self):\n    while True:\n        pass\n", "a `While` statement"),
        ("def _export_scopes(self):\n    return [s for s in 'ab' * 9]\n", "a `BinOp` expression"),
        ("def _export_scopes(self, b=None):\n    return [open('/tmp/x').read()]\n", "a `Call` expression"),
        ("def _export_scopes(self):\n    return ['all' for _ in [0] * 9]\n", "a `BinOp` expression"),
        ("EXPORT_SKIPS = {}\n", "no _export_scopes function and no `scopes` list built in _should_skip"),
    ],
)
def test_a_walk_it_cannot_read_without_running_it_is_refused(tmp_path, module, why):
    root = checkout(tmp_path, module)
    with pytest.raises(WalkUnreadable, match="pass --source zoo") as raised:
        read_walk(root)
    assert why in str(raised.value) and "\n" not in str(raised.value)


def test_a_walk_is_evaluated_not_run_and_bounded(tmp_path):
    marker = tmp_path / "ran"
    root = checkout(
        tmp_path / "co",
        f"def _export_scopes(self):\n    scopes = ['all']\n    scopes.append(__import__('pathlib').Path({str(marker)!r}).touch())\n",
    )
    with pytest.raises(WalkUnreadable):
        read_walk(root)
    assert not marker.exists()
    long = checkout(
        tmp_path / "long", "def _export_scopes(self):\n    s = []\n" + "    s.extend(['a', 'b'])\n" * 30_000
    )
    with pytest.raises(WalkUnreadable, match="more than 20000 steps"):
        read_walk(long)


@pytest.mark.parametrize(
    "grow",
    ["    s += s\n", "    s = s + s\n", "    s = f'{s}{s}'\n", "    scopes.extend(scopes)\n"],
    ids=["+=", "+", "f-string", "extend"],
)
def test_a_walk_doubling_a_value_in_few_steps_is_refused_before_it_exhausts_the_memory(tmp_path, grow):
    """Sixty doublings are sixty steps, far below the step bound, and 2**60 characters or items."""
    root = checkout(
        tmp_path, "def _export_scopes(self):\n    scopes = ['all']\n    s = 'ab'\n" + grow * 60 + "    return scopes\n"
    )
    with pytest.raises(WalkUnreadable, match="a value of more than 10,000 items"):
        read_walk(root)


def test_no_module_means_the_bots_own_rules_judge(tmp_path):
    (tmp_path / "tests").mkdir()
    assert read_walk(tmp_path) is None


def test_explain_shows_the_walk_the_checkout_would_do(next_version, tmp_path):
    skiplists = skiplists_dir(tmp_path, '["dynamo.dynamic"]\nLlamaForCausalLM = "Dynamic decode."\n')
    cell = "LlamaForCausalLM::test_torch_export_generate_dynamic_multi_token"
    result = invoke(
        "skiplist", "explain", "--skiplists", skiplists, "--source", f"transformers-tests:{next_version}", cell
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1:4] == [
        "  walk: the checkout's tests/exporters/test_export.py, read without running it",
        "  skip scopes walked: dynamo → dynamo.generate → dynamo.dynamic",
        "  skipped by scope `dynamo.dynamic`: Dynamic decode.",
    ]
    zoo = invoke(
        "skiplist", "explain", "--skiplists", skiplists, "--source", "zoo", "BertModel::test_torch_export_static"
    )
    assert "skip scopes walked: all → static → dynamo → dynamo.static" in zoo.output
    assert "walk: the bot's own (docs/skiplists.md)" in zoo.output


def test_lint_flags_a_scope_the_checkouts_walk_never_visits(next_version, tmp_path):
    path = tmp_path / "export_skips.toml"
    path.write_text('[generate]\nBertModel = "Old scope."\n["dynamo.generate"]\nT5Model = "New scope."\n')
    result = invoke("skiplist", "lint", "--strict", "--source", f"transformers-tests:{next_version}", path)
    assert result.exit_code == 1
    assert (
        f"{path}:1:2: warning: unknown scope `generate`: the walk of tests/exporters/test_export.py never visits it"
        in (result.output)
    )
    assert "dynamo.generate" not in result.output.replace("T5Model", "")  # the version's own scope is fine
    assert invoke("skiplist", "lint", "--strict", "--source", "zoo", path).exit_code == 0


def test_an_unreadable_walk_refuses_with_one_line(tmp_path):
    root = checkout(tmp_path / "co", "def _export_scopes(self):\n    return SCOPES\n")
    skiplists = skiplists_dir(tmp_path)
    for args in (
        ("skiplist", "lint", skiplists),
        ("skiplist", "explain", "--skiplists", skiplists, "BertModel::test_torch_export_static"),
    ):
        result = invoke(*args, "--source", f"transformers-tests:{root}")
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
        assert result.output.startswith("error: --source transformers-tests:") and "pass --source zoo" in result.output


def test_proposals_use_only_the_scopes_the_checkout_walks(next_version, tmp_path):
    # Static torch.export and ONNX fail, everything dynamic passes: the seed's walk would propose
    # `static`, a scope this version never visits; its own walk has `dynamo.static` and `onnx.static`.
    cells = [c for c in row("BertModel") if c.backend in ("dynamo", "onnx")]
    results = outcomes(cells, lambda c: not c.dynamic)
    folder = skiplists_dir(tmp_path)
    seed = propose_at(report(results), folder)
    assert [e.scope for e in seed.entries] == ["static"]
    walk = read_walk(next_version)
    proposal = propose_at(report(results), folder, walk=walk)
    assert sorted(e.scope for e in proposal.entries) == ["dynamo.static", "onnx.static"]
    assert all(e.scope in walk.known for e in proposal.entries)
    # The command does the same from the configured source, and refuses when the walk is unreadable.
    path = tmp_path / "report.json"
    write_report(report(results), path)
    cli = invoke("propose", "--report", path, "--skiplists", folder, "--source", f"transformers-tests:{next_version}")
    assert cli.exit_code == 0 and '+["dynamo.static"]' in cli.output and "+[static]" not in cli.output
    broken = checkout(tmp_path / "broken", "def _export_scopes(self):\n    return SCOPES\n")
    refused = invoke("propose", "--report", path, "--skiplists", folder, "--source", f"transformers-tests:{broken}")
    assert refused.exit_code == 2 and "pass --source zoo" in refused.output


def test_the_report_job_proposes_in_the_checkouts_scopes_and_keeps_its_report_when_it_cannot(next_version, tmp_path):
    from bot.jobs.report import ReportInputs, ReportOutputs, make_report
    from bot.skiplist.model import read_skiplists
    from tests.results.factory import Case, junit

    cases = [
        Case(f"BertModel::test_{fn}_export_{shape}", "failed" if shape == "static" else "passed", stage="export")
        for fn in ("torch", "onnx")
        for shape in ("static", "dynamic")
    ]
    head = tmp_path / "head.xml"
    head.write_text(junit(cases), encoding="utf-8")
    folder = skiplists_dir(tmp_path)
    outcome = make_report(
        ReportInputs(head=(head,), source=f"transformers-tests:{next_version}"),
        ReportOutputs(report=tmp_path / "out" / "report.json"),
        read_skiplists(folder),
    )
    assert sorted(e.scope for e in outcome.report.proposal.entries) == ["dynamo.static", "onnx.static"]
    broken = checkout(tmp_path / "broken", "def _export_scopes(self):\n    return SCOPES\n")
    notes: list[str] = []
    kept = make_report(
        ReportInputs(head=(head,), source=f"transformers-tests:{broken}"),
        ReportOutputs(report=tmp_path / "kept" / "report.json"),
        read_skiplists(folder),
        echo=notes.append,
    )
    assert kept.report.verdict == "failure" and kept.report.proposal is None and kept.patch == ""
    assert (tmp_path / "kept" / "report.json").is_file()
    assert len(notes) == 1 and notes[0].startswith("no skiplist proposal: --source transformers-tests:")
