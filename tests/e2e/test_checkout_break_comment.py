"""A PR breaks BERT's export in upstream's real checkout: the comment a Transformers maintainer reads when its test judges.

The checkout is assembled from the 5.23.0 sdist and upstream's real testers (read at test time
from `../shared/upstream`, as tests/run/test_parity_upstream.py does); `BertLayer.forward` gains a
branch on a tensor's value. The checkout's own test judges the cell, so the comment must say the
stage from where that test failed (never `unknown`, in the cause or in the proposed reason that
would land in a skiplist), give the checkout's own pytest command as the repro with the bot's
beside it, name the backend as its table does, and cite no file of the bot's own source.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.run.test_parity_upstream import real_checkout  # noqa: F401 (the fixture: the assembled checkout)

MODELING = "src/transformers/models/bert/modeling_bert.py"
ANCHOR = "        self_attention_output, _ = self.attention(\n"
BRANCH = "        if hidden_states.sum() > 0:\n            hidden_states = hidden_states * 1.0\n"
TEST_ID = "tests/models/bert/test_modeling_bert.py::BertModelTest::test_torch_export_static"


def add_data_dependent_branch(checkout: Path) -> None:
    path = checkout / MODELING
    text = path.read_text(encoding="utf-8")
    assert text.count(ANCHOR) == 1, "BertLayer.forward changed shape: update the anchor"
    path.write_text(text.replace(ANCHOR, BRANCH + ANCHOR), encoding="utf-8")


def in_checkout(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    """A command run from the checkout's root with its own transformers (never the environment's)."""
    env = dict(os.environ, PYTHONPATH=f"{checkout / 'src'}{os.pathsep}{ROOT}", TOKENIZERS_PARALLELISM="false")
    return subprocess.run(args, cwd=checkout, env=env, capture_output=True, text=True, timeout=900, check=False)


@pytest.mark.export
@pytest.mark.timeout(900)
def test_a_break_the_checkouts_test_judges_reads_as_a_transformers_contributor_expects(real_checkout, tmp_path):  # noqa: F811
    add_data_dependent_branch(real_checkout)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bot", "check", "--source", f"transformers-tests:{real_checkout}", "-n", "0"]
    command += ["--models", "BertModel", "--backends", "dynamo", "--shapes", "static", "--out", str(out)]
    checked = in_checkout(real_checkout, *command)
    assert checked.returncode == 1, checked.stdout[-3000:] + checked.stderr[-3000:]
    comment = (out / "comment.md").read_text(encoding="utf-8")

    assert "Judged by the checkout's tests/exporters/test_export.py" in comment, comment
    assert (
        "`GuardOnDataDependentSymNode: " in comment and "at stage `export`: 1 cell, 1 class × dynamo static" in comment
    )
    assert f"`{MODELING}:" in comment and "`if hidden_states.sum() > 0:`" in comment, comment
    # The checkout's own test, as a contributor runs it; the bot's command for the cell alone beside it.
    repro = f"`RUN_SLOW=1 python -m pytest {TEST_ID}` (the checkout's test)"
    assert (
        f"- 🔁 Reproduce: {repro}; this cell alone: `export-bot run --cells BertModel::test_torch_export_static"
        in comment
    )
    # The proposed skip: its reason, as it would stay in the TOML, says the stage the test failed in.
    patch = (out / "skiplists.patch").read_text(encoding="utf-8")
    [added] = [line for line in patch.splitlines() if line.startswith("+BertModel = ")]
    assert added.startswith(
        '+BertModel = "Torch export (static shapes) fails at stage `export` in `src/transformers/'
    ), added
    for said in (comment, patch):
        assert "unknown" not in said and "bot/" not in said and "observed_walk" not in said
    assert "× torch" not in comment  # one name per backend: the table's

    # The pytest command names one test of the checkout, the one that judged (collected, not run: ~1 min on CPU).
    argv = shlex.split(repro.split("`")[1])
    assert argv[:4] == ["RUN_SLOW=1", "python", "-m", "pytest"]
    collected = in_checkout(real_checkout, sys.executable, *argv[2:], "--collect-only", "-q", "-p", "no:cacheprovider")
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert [line for line in collected.stdout.splitlines() if "::" in line] == [TEST_ID], collected.stdout
