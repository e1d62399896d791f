"""report.json: the versioned schema round-trips, rejects other schemas, and carries the proposal slot."""

from __future__ import annotations

import json

import pytest

from bot.diff.model import SCHEMA, CellLine, ReportError, load_report, write_report
from bot.diff.proposal import Proposal
from tests.report.sample import failure_report, neutral_report, no_baseline_report


@pytest.mark.parametrize("build", [failure_report, neutral_report, no_baseline_report])
def test_report_json_round_trips(tmp_path, build):
    report = build(tmp_path / "skiplists")
    write_report(report, tmp_path / "report.json")
    assert load_report(tmp_path / "report.json") == report
    assert json.loads((tmp_path / "report.json").read_text())["schema"] == SCHEMA == "export-bot/report@1"


def test_report_json_holds_what_the_proposal_and_publishing_steps_read(tmp_path):
    data = failure_report(tmp_path / "s").to_json()
    assert (
        data["verdict"] == "failure"
        and data["base_sha"] == "1111111111111111"
        and data["head_sha"] == "2222222222222222"
    )
    assert data["run_url"] == "https://github.com/o/r/actions/runs/42"
    assert data["versions"]["torch"] == "2.13.0"
    assert [line["cell"] for line in data["categories"]["newly_broken"]] == [
        "BertModel::test_onnx_export_dynamic",
        "GPT2LMHeadModel::test_executorch_export_generate_dynamic_xnnpack",
        "GroundingDinoModel::test_onnx_export_dynamic",
    ]
    cells = {line["cell"]: line for line in data["cells"]}
    assert cells["BertModel::test_onnx_export_dynamic"] == {
        "cell": "BertModel::test_onnx_export_dynamic",
        "status": "failed",
        "stage": "export",
        "message": "RuntimeError: boom | pipe @someone <b>",
        "base_status": "passed",
    }
    assert cells["BertModel::test_torch_export_static"]["exactness_scope"] == "exactness"
    assert cells["CLIPModel::test_openvino_export_dynamic"]["probe"] is True
    assert data["proposal"]["entries"][0]["model_class"] == "BertModel"
    assert data["counts"]["onnx/dynamic"] == {"failed": 2}
    assert data["provenance"] == {
        "transformers_version": "5.23.0",
        "transformers_location": "/work/transformers/src/transformers",
        "transformers_sha": "2222222222222222abcdefabcdefabcdefabcdef",
        "shards_disagree": [],
    }
    assert data["not_buildable"][0]["classes"] == ["LlamaForQuestionAnswering", "LlamaForTokenClassification"]


def test_with_proposal_replaces_only_the_proposal(tmp_path):
    report = neutral_report(tmp_path / "s")
    updated = report.with_proposal(Proposal(patch="--- a\n+++ b\n"))
    assert updated.proposal == Proposal(patch="--- a\n+++ b\n") and report.proposal is None
    assert updated.with_proposal(None) == report


def test_other_schemas_and_broken_files_are_refused_with_what_to_do(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"schema": "export-bot/report@2", "verdict": "success"}))
    with pytest.raises(ReportError, match="report@2"):
        load_report(path)
    path.write_text("{ not json")
    with pytest.raises(ReportError, match="cannot read the report"):
        load_report(path)


def test_cell_lines_leave_defaults_out_of_json():
    assert CellLine("A::test_onnx_export_static", "passed").to_json() == {
        "cell": "A::test_onnx_export_static",
        "status": "passed",
    }
    line = CellLine("A::test_onnx_export_static", "failed", stage="run", probe=True)
    assert CellLine.from_json(line.to_json()) == line
