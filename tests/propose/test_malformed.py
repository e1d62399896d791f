"""A report.json whose proposal is malformed (report.json is written by code a pull request controls):
every command that reads it exits 2 with one line naming the field, never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import ReportError, load_report, write_report
from bot.diff.proposal import MAX_ENTRIES, Proposal, ProposedEdit
from bot.propose.proposal import ProposalError, apply_edits
from tests.conftest import ROOT
from tests.propose.helpers import outcomes, report, row, skiplists_dir

SKIPS = '# ONNX, every variant.\n[onnx]\nFooModel = "Old reason."\n'
ENTRY = {
    "action": "remove",
    "file": "export_skips.toml",
    "scope": "onnx",
    "model_class": "FooModel",
    "evidence": ["FooModel::test_onnx_export_static"],
}
BAD = [
    pytest.param({k: v for k, v in ENTRY.items() if k != "action"}, "proposal.entries[0].action", id="no-action"),
    pytest.param(dict(ENTRY, action="rename"), "proposal.entries[0].action", id="unknown-action"),
    pytest.param(dict(ENTRY, action=["add"]), "proposal.entries[0].action", id="action-not-a-string"),
    pytest.param(dict(ENTRY, file="../../.github/workflows/ci.toml"), "proposal.entries[0].file", id="foreign-file"),
    pytest.param(dict(ENTRY, scope='onnx"]\n[x'), "proposal.entries[0].scope", id="scope-injection"),
    pytest.param(dict(ENTRY, model_class="A = 1\nB"), "proposal.entries[0].model_class", id="class-injection"),
    pytest.param(dict(ENTRY, action="add"), "proposal.entries[0].reason", id="add-without-reason"),
    pytest.param(dict(ENTRY, action="narrow"), "proposal.entries[0].new_scopes", id="narrow-without-scopes"),
    pytest.param(dict(ENTRY, evidence="FooModel::x"), "proposal.entries[0].evidence", id="evidence-not-a-list"),
    pytest.param("remove FooModel", "proposal.entries[0]", id="entry-not-an-object"),
]


def malformed_report(tmp_path, proposal) -> tuple:
    folder = skiplists_dir(tmp_path, SKIPS)
    path = tmp_path / "report.json"
    write_report(report(outcomes(row("FooModel"), lambda c: False, probe=True)), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["proposal"] = proposal
    path.write_text(json.dumps(data), encoding="utf-8")
    return folder, path


def one_error_line(output: str) -> str:
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


@pytest.mark.parametrize("entry, field", BAD)
def test_propose_on_a_malformed_proposal_exits_2_with_one_line(tmp_path, entry, field):
    folder, path = malformed_report(tmp_path, {"entries": [entry], "patch": ""})
    result = CliRunner().invoke(main, ["propose", "--report", str(path), "--skiplists", str(folder)])
    assert result.exit_code == 2, result.output
    assert f"field `{field}" in one_error_line(result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_error_says_where_and_what_to_do(tmp_path):
    _, path = malformed_report(tmp_path, {"entries": [dict(ENTRY, action="rename")]})
    with pytest.raises(ReportError) as caught:
        load_report(path)
    assert str(caught.value) == (
        f"{path}: field `proposal.entries[0].action` must be one of add, remove, narrow, not 'rename'; "
        "regenerate the proposal with `export-bot propose --write-report`"
    )


def test_the_real_command_line_gives_one_line_and_exit_2(tmp_path):
    folder, path = malformed_report(tmp_path, {"entries": [{k: v for k, v in ENTRY.items() if k != "action"}]})
    done = subprocess.run(
        [sys.executable, "-m", "bot", "propose", "--report", str(path), "--skiplists", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "field `proposal.entries[0].action` must be one of add, remove, narrow" in done.stderr


@pytest.mark.parametrize(
    "proposal, field",
    [
        ({"entries": [ENTRY] * (MAX_ENTRIES + 1)}, "proposal.entries"),
        ({"entries": "all"}, "proposal.entries"),
        ({"entries": [], "patch": 7}, "proposal.patch"),
        ({"entries": [], "runs": 0}, "proposal.runs"),
        ({"entries": [], "min_passes": True}, "proposal.min_passes"),
        ({"uncoverable": [{"finest_scope": "onnx"}]}, "proposal.uncoverable[0].cell"),
        (["entries"], "proposal"),
    ],
)
def test_sizes_and_shapes_are_bounded(proposal, field):
    with pytest.raises(ReportError, match=re.escape(f"field `{field}`")):
        Proposal.from_json(proposal)


def test_what_to_json_writes_reads_back_equal():
    proposal = Proposal(
        entries=(
            ProposedEdit("add", "export_skips.toml", "onnx.dynamic", "BarModel", reason="Why.", evidence=("a",)),
            ProposedEdit("narrow", "export_skips.toml", "onnx", "FooModel", new_scopes=("onnx.static",)),
        ),
        patch="--- a\n",
        min_passes=3,
        runs=3,
    )
    assert Proposal.from_json(json.loads(json.dumps(proposal.to_json()))) == proposal
    assert Proposal.from_json({}) == Proposal()


def test_an_edit_with_an_unknown_action_built_in_code_is_a_bot_error():
    edit = ProposedEdit("rename", "export_skips.toml", "onnx", "FooModel")
    with pytest.raises(ProposalError, match="unknown proposal action 'rename'"):
        apply_edits([edit], {"export_skips.toml": SKIPS})
