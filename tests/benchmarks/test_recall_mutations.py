"""benchmarks/recall_mutations.py: every mutation applies to the real files it names, and the result still compiles.

The real files are the transformers 5.23.0 sdist (cached by scripts/test.sh) for `src/`, and
upstream's test files beside this repository in `../shared/upstream` (or where
`EXPORT_BOT_UPSTREAM` points) for the tests the sdist lacks, as tests/run/test_parity_upstream.py
finds them; the sdist is read straight from the tarball, nothing is assembled. Outside CI a
missing input skips, under `CI=true` it fails.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
import tarfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

SDIST = ROOT / ".ci" / "cache" / "transformers-5.23.0.tar.gz"
PATH = ROOT / "benchmarks" / "recall_mutations.py"


def _mutations():
    spec = importlib.util.spec_from_file_location("recall_mutations", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["recall_mutations"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _upstream() -> Path:
    given = os.environ.get("EXPORT_BOT_UPSTREAM")
    return Path(given) if given else ROOT.parent / "shared" / "upstream"


@pytest.fixture(scope="module")
def real_files() -> dict[str, str]:
    """path → text of every file a mutation edits: upstream's test files first, else the sdist's."""
    missing = [str(p) for p in (_upstream() / "tests", SDIST) if not p.exists()]
    if missing and os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI checks the recall mutations against the real files, but {missing} are missing")
    if missing:
        pytest.skip(f"the real files are not there: {missing}")
    paths = {m.path for m in _mutations().MUTATIONS}
    found = {p: (_upstream() / p).read_text(encoding="utf-8") for p in paths if (_upstream() / p).is_file()}
    with tarfile.open(SDIST) as sdist:
        members = {member.name.split("/", 1)[1]: member for member in sdist.getmembers() if "/" in member.name}
        for path in paths - set(found):
            if path in members:
                found[path] = sdist.extractfile(members[path]).read().decode("utf-8")
    return found


def test_every_mutation_applies_to_the_real_file_and_still_compiles(real_files):
    module = _mutations()
    assert len(module.MUTATIONS) >= 10
    assert len({m.name for m in module.MUTATIONS}) == len(module.MUTATIONS)
    for mutation in module.MUTATIONS:
        assert "/models/" not in mutation.path, mutation.name  # shared code and tests, never a model folder
        assert mutation.path in real_files, f"{mutation.name}: {mutation.path} is in neither the sdist nor upstream"
        original = real_files[mutation.path]
        mutated = mutation.apply(original)
        assert mutated != original, mutation.name
        ast.parse(mutated, filename=mutation.path)


def test_a_missing_or_repeated_anchor_is_refused():
    module = _mutations()
    mutation = module.Mutation("m", "f.py", "kind", "summary", (("x = 1\n", "x = 2\n"),), ())
    assert mutation.apply("x = 1\n") == "x = 2\n"
    for text in ("y = 1\n", "x = 1\nx = 1\n"):
        with pytest.raises(ValueError, match="anchor found"):
            mutation.apply(text)
