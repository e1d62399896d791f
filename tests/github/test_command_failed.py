"""`/export-check failed` end to end: the latest report of a run GitHub ties to the PR, its failing cells, one dispatch."""

from __future__ import annotations

import json

import pytest

from bot.diff.model import CellLine, Report
from bot.publish.command import MAX_FAILED, Request
from bot.select.request import parse_request
from tests.github.conftest import READER, comment_event, outputs, report_zip

WORKFLOW = "export-conformance.yml"
BERT = "BertModel::test_onnx_export_static"
LLAMA = "LlamaForCausalLM::test_torch_export_dynamic"
VIT = "ViTModel::test_executorch_export_dynamic_xnnpack"


def _report(head_sha: str, **categories) -> bytes:
    lines = {
        name: tuple(line if isinstance(line, CellLine) else CellLine(line, "failed") for line in found)
        for name, found in categories.items()
    }
    return report_zip(Report("failure", "3 cells broke", True, categories=lines, head_sha=head_sha))


def _pr_run(fake, head_sha, artifact, **kw) -> int:
    kw = {"branch": "feature", "event": "pull_request", "conclusion": "failure", **kw}
    return fake.add_run(WORKFLOW, head_sha=head_sha, artifacts={"export-report": artifact}, **kw)


def _command(fake, gh, body="/export-check failed", **kw):
    return gh("command", "--dispatch", WORKFLOW, event=comment_event(fake, body, **kw))


def test_the_failing_cells_of_the_latest_report_are_dispatched_and_nothing_else(fake, gh):
    head = fake.state.refs["heads/feature"]
    # An older head's report with other failing cells is not this head's: never used.
    _pr_run(fake, "0" * 40, _report("0" * 40, newly_broken=["GPT2Model::test_onnx_export_static"]))
    report = _report(
        head,
        newly_broken=[VIT],
        new_failing=[CellLine(LLAMA, "error", kind="timeout")],
        still_failing=[BERT],
        flaky=["ViTModel::test_onnx_export_static"],
        newly_passing=[CellLine("BertModel::test_onnx_export_dynamic", "passed")],
        newly_skipped=[CellLine("BertModel::test_torch_export_static", "skipped")],
    )
    _pr_run(fake, head, report)
    result = _command(fake, gh)
    assert result.exit_code == 0, result.output
    [dispatch] = fake.state.dispatches
    request = Request.from_json(dispatch["inputs"]["request"])
    assert request == Request("failed", cells=(BERT, LLAMA, VIT), pr=1, head_sha=head, comment_id=500)
    assert dispatch["inputs"]["sha"] == head and dispatch["inputs"]["comment"] == "500"
    # The run's select step reads the same request back into exactly those cells.
    assert [c.id for c in parse_request(dispatch["inputs"]["request"]).cells] == [BERT, LLAMA, VIT]
    assert fake.state.reactions[500] == ["eyes"] and fake.bot_comments(1) == []
    found = outputs(gh.output)
    assert found["accepted"] == "true" and found["kind"] == "failed"


def test_a_fork_runs_forged_report_for_another_pr_is_never_used(fake, gh):
    head = fake.state.refs["heads/feature"]
    # A fork pushes PR #1's head to its own branch (called `feature` too) and its own workflow uploads
    # a report for it; it also opens PR #9 from that branch. Its runs are newer than #1's own.
    fake.open_pull(9, "feature", fork="someone/Hello-World", head_sha=head)
    _pr_run(fake, head, _report(head, newly_broken=[BERT]))
    forged = _report(head, newly_broken=["EvilModel::test_onnx_export_static"])
    _pr_run(fake, head, forged, head_repo="someone/Hello-World")
    fake.add_run(WORKFLOW, head_sha=head, branch="feature", head_repo="someone/Hello-World",
                 artifacts={"export-report": forged})  # fmt: skip
    assert _command(fake, gh).exit_code == 0
    [dispatch] = fake.state.dispatches
    assert Request.from_json(dispatch["inputs"]["request"]).cells == (BERT,)
    # On the fork's own PR, `failed` would need a dispatched run of the fork's code: refused.
    fake.state.dispatches.clear()
    assert _command(fake, gh, number=9).exit_code == 0
    assert fake.state.dispatches == []


def test_a_fork_runs_report_alone_is_no_report_for_a_same_repository_pr(fake, gh):
    head = fake.state.refs["heads/feature"]
    forged = _report(head, newly_broken=["EvilModel::test_onnx_export_static"])
    _pr_run(fake, head, forged, head_repo="someone/Hello-World")
    assert _command(fake, gh).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert f"no conformance report for the current head {head[:12]}" in reply["body"]
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]


def test_a_dispatched_runs_report_counts_only_when_it_states_the_current_head(fake, gh):
    head = fake.state.refs["heads/feature"]
    main = fake.state.refs["heads/main"]
    title = "export-conformance #1: /export-check rerun (comment 400)"
    _pr_run(fake, head, _report(head, newly_broken=[BERT]))
    # Newer dispatched runs for #1, on the default branch's commit: the newest states an old head.
    fake.add_run(WORKFLOW, head_sha=main, event="workflow_dispatch", title=title,
                 artifacts={"export-report": _report(head, newly_broken=[LLAMA])})  # fmt: skip
    fake.add_run(WORKFLOW, head_sha=main, event="workflow_dispatch", title=title,
                 artifacts={"export-report": _report("1" * 40, newly_broken=[VIT])})  # fmt: skip
    assert _command(fake, gh).exit_code == 0
    [dispatch] = fake.state.dispatches
    assert Request.from_json(dispatch["inputs"]["request"]).cells == (LLAMA,)


@pytest.mark.parametrize(
    "hostile",
    ["Bert; rm -rf /", "A" * 10_000 + "::test_onnx_export_static", "BertModel::test_onnx_export_static\n@everyone"],
)
def test_a_report_listing_a_hostile_cell_id_is_refused_with_one_reply(fake, gh, hostile):
    head = fake.state.refs["heads/feature"]
    _pr_run(fake, head, _report(head, newly_broken=[BERT, hostile]))
    result = _command(fake, gh)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    [reply] = fake.bot_comments(1)
    body = reply["body"]
    assert "cannot be used" in body and "categories.newly_broken[1]" in body
    assert "rm -rf /" not in body and "@everyone" not in body and "A" * 50 not in body
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]
    assert outputs(gh.output)["accepted"] == "false"


def test_a_report_that_is_not_a_report_is_refused_without_echoing_it(fake, gh):
    head = fake.state.refs["heads/feature"]
    data = {"schema": "export-bot/report@1", "verdict": "@everyone look", "head_sha": head}
    _pr_run(fake, head, report_zip_of(data))
    assert _command(fake, gh).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert "is not a report this bot can read" in reply["body"] and "@everyone" not in reply["body"]
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]


def report_zip_of(data: dict) -> bytes:
    from tests.github.conftest import zipped

    return zipped({"report.json": json.dumps(data)})


def test_no_report_gets_one_reply_and_no_run(fake, gh):
    result = _command(fake, gh)
    assert result.exit_code == 0, result.output
    [reply] = fake.bot_comments(1)
    assert "no conformance report for the current head" in reply["body"] and "`/export-check`" in reply["body"]
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]


def test_a_report_for_an_earlier_head_is_no_report_once_the_head_moved(fake, gh):
    old = fake.state.refs["heads/feature"]
    _pr_run(fake, old, _report(old, newly_broken=[BERT]))
    new = fake.commit({"src/x.py": "x = 2\n"}, (old,), "push")
    fake.state.refs["heads/feature"] = new
    assert _command(fake, gh).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert f"no conformance report for the current head {new[:12]}" in reply["body"]
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]


def test_a_report_without_failing_cells_is_answered_plainly(fake, gh):
    head = fake.state.refs["heads/feature"]
    _pr_run(fake, head, _report(head, flaky=[BERT], still_failing=[CellLine(LLAMA, "failed", probe=True)]))
    assert _command(fake, gh).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert "no failing cells to re-run" in reply["body"]
    assert fake.state.dispatches == [] and 500 not in fake.state.reactions
    assert outputs(gh.output)["accepted"] == "false"


def test_beyond_the_bound_the_first_cells_by_id_run_and_one_reply_says_the_rest(fake, gh):
    head = fake.state.refs["heads/feature"]
    ids = [f"Model{i:03d}ForCausalLM::test_torch_export_generate_dynamic_static_cache" for i in range(MAX_FAILED + 30)]
    _pr_run(fake, head, _report(head, newly_broken=list(reversed(ids))))
    assert _command(fake, gh).exit_code == 0
    [dispatch] = fake.state.dispatches
    assert Request.from_json(dispatch["inputs"]["request"]).cells == tuple(ids[:MAX_FAILED])
    [reply] = fake.bot_comments(1)
    assert f"{MAX_FAILED + 30} failing cells" in reply["body"] and "other 30" in reply["body"]
    assert fake.state.reactions[500] == ["eyes"]


def test_a_reader_is_refused_before_any_report_is_read(fake, gh):
    head = fake.state.refs["heads/feature"]
    _pr_run(fake, head, _report(head, newly_broken=[BERT]))
    assert _command(fake, gh, author=READER).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert "write, maintain or admin" in reply["body"] and fake.state.dispatches == []


def test_github_refusing_to_list_the_runs_is_answered_once_and_fails_the_job(fake, gh):
    fake.inject("status", method="GET", path=r"/actions/workflows/.*/runs$", status=500, times=100)
    result = _command(fake, gh)
    assert result.exit_code == 2 and "Traceback" not in result.output
    [reply] = fake.bot_comments(1)
    assert "nothing was re-run" in reply["body"]
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]
