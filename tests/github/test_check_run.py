"""The `export-conformance` check run: the comment as its summary, each culprit line of src/transformers annotated."""

from __future__ import annotations

from dataclasses import replace

from bot.diff.groups import Culprit, Group
from bot.diff.model import write_report
from tests.github.conftest import make_report
from tests.github.payloads import workflow_run_event

LINE = 412


def _group(i: int, path: str = "src/transformers/models/llama/modeling_llama.py", line: int = LINE) -> Group:
    return Group(
        stage="export",
        signature=f"GuardOnDataDependentSymNode: Could not guard on data-dependent expression u{i}",
        cells=("LlamaForCausalLM::test_onnx_export_static", "LlamaModel::test_onnx_export_static"),
        excerpt=f"GuardOnDataDependentSymNode: u{i} > 0",
        culprit=Culprit(path, line, "if mask.any():", changed=True),
        repro="export-bot run --cells LlamaForCausalLM::test_onnx_export_static",
    )


def _comment(fake, gh, tmp_path, groups):
    head = fake.state.refs["heads/feature"]
    report = replace(make_report(head_sha=head, verdict="failure", headline="2 cells newly broken"), groups=groups)
    path = tmp_path / "report.json"
    write_report(report, path)
    event = workflow_run_event(repo=fake.repo, run_id=7, head_sha=head, pr_numbers=[1])
    result = gh("comment", "--report", str(path), event=event, env={"GITHUB_RUN_ID": "7"})
    assert result.exit_code == 0, result.output
    return head, result


def test_a_breaking_pr_gets_a_check_run_annotated_on_its_culprit_line(fake, gh, tmp_path):
    head, result = _comment(fake, gh, tmp_path, (_group(0),))
    (run,) = fake.state.check_runs.values()
    assert (run["name"], run["head_sha"], run["status"], run["conclusion"]) == (
        "export-conformance report", head, "completed", "failure"
    )  # fmt: skip
    # Its own name: a check run named like the required status would be required too.
    assert run["name"] not in {s["context"] for s in fake.state.statuses[head]}
    # Its summary is the sticky comment (which adds only its run stamp), its title the verdict.
    assert fake.bot_comments(1)[0]["body"].startswith(run["output"]["summary"])
    assert run["output"]["title"] == "Export conformance: failure"
    (note,) = run["annotations"]
    assert (note["path"], note["start_line"], note["end_line"], note["annotation_level"]) == (
        "src/transformers/models/llama/modeling_llama.py", LINE, LINE, "failure"
    )  # fmt: skip
    assert "GuardOnDataDependentSymNode: u0 > 0" in note["message"] and "2 export cells fail at export" in note["title"]
    assert "check run failure" in result.output
    # The status is still the gate, set as before.
    assert fake.state.statuses[head][-1]["context"] == "export-conformance"


def test_annotations_go_in_batches_of_fifty(fake, gh, tmp_path):
    _comment(fake, gh, tmp_path, tuple(_group(i, line=i + 1) for i in range(120)))
    (run,) = fake.state.check_runs.values()
    assert run["output"]["annotations_count"] == 120
    calls = [(method, path) for method, path in fake.requests if "/check-runs" in path]
    assert [method for method, _ in calls] == ["POST", "PATCH", "PATCH"]


def test_a_forged_culprit_path_is_never_annotated(fake, gh, tmp_path):
    forged = (
        _group(1, path="src/transformers/../../.github/workflows/x.py"),
        _group(2, path="/etc/passwd"),
        _group(3, path="tests/models/llama/test_modeling_llama.py"),
        _group(4, line=0),
        _group(5),
    )
    _comment(fake, gh, tmp_path, forged)
    (run,) = fake.state.check_runs.values()
    assert [(a["path"], a["start_line"]) for a in run["annotations"]] == [
        ("src/transformers/models/llama/modeling_llama.py", LINE)
    ]
