"""What GitHub listed is gone by the next call: an artifact expired or deleted, a comment deleted, a PR
closed, a run deleted. Each is passed over or said, never a failed job for something no one can fix."""

from __future__ import annotations

import json

import pytest

from tests.github.conftest import comment_event, make_report, propose_on_feature, report_zip, zipped
from tests.github.payloads import workflow_run_event
from tests.results.factory import Case, junit


def _expire(aid):
    def act(fake):
        fake.state.artifacts[aid]["expired"] = True

    return act


def _delete(aid):
    def act(fake):
        del fake.state.artifacts[aid]

    return act


GONE = {"expired": _expire, "deleted": _delete}


def _state_zip(message: str) -> bytes:
    return zipped({"b.xml": junit([Case("BertModel::test_onnx_export_static", status="failed", message=message)])})


def _two_sweeps(fake, name: str, older: bytes, newer: bytes) -> int:
    """Two sweeps of main uploading `name`; the id of the newer one's artifact."""
    main = fake.state.refs["heads/main"]
    fake.add_run("export-baseline.yml", head_sha=main, event="schedule", artifacts={name: older})
    fake.add_run("export-baseline.yml", head_sha=main, event="schedule", artifacts={name: newer})
    return max(fake.state.artifacts)


@pytest.mark.parametrize("how", GONE)
def test_a_baseline_artifact_gone_before_its_download_is_passed_over(fake, gh, tmp_path, how):
    from bot.results.baseline_json import read_state

    newest = _two_sweeps(fake, "export-baseline", _state_zip("older"), _state_zip("newer"))
    fake.before(method="GET", path=rf"/actions/artifacts/{newest}/zip$", action=GONE[how](newest))
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output
    state = read_state(tmp_path / "base" / "baseline.json")
    assert [m.result.message for ms in state.cells.values() for m in ms] == ["older"]


@pytest.mark.parametrize("how", GONE)
def test_a_nights_report_gone_before_its_download_is_left_out_of_the_history(fake, gh, tmp_path, how):
    main = fake.state.refs["heads/main"]
    older, newer = (report_zip(make_report(head_sha=main, headline=h)) for h in ("older", "newer"))
    newest = _two_sweeps(fake, "export-baseline", older, newer)  # the sweep uploads its report in it
    fake.before(method="GET", path=rf"/actions/artifacts/{newest}/zip$", action=GONE[how](newest))
    out = tmp_path / "history"
    result = gh("reports", "--count", "5", "--out", str(out), env={"GITHUB_RUN_ID": "0"})
    assert result.exit_code == 0, result.output
    [night] = sorted(out.iterdir())
    assert json.loads((night / "report.json").read_text())["headline"] == "older"


@pytest.mark.parametrize("how", GONE)
def test_a_prs_report_gone_before_its_download_is_no_report(fake, gh, how):
    propose_on_feature(fake, {"entries": []})
    aid = max(fake.state.artifacts)
    fake.before(method="GET", path=rf"/actions/artifacts/{aid}/zip$", action=GONE[how](aid), times=10)
    result = gh("apply", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2, result.output  # a refusal, answered on the PR
    [reply] = fake.bot_comments(1)
    assert "no conformance report for the current head" in reply["body"]


def test_a_run_deleted_after_the_listing_is_passed_over(fake, gh, tmp_path):
    from bot.results.baseline_json import read_state

    _two_sweeps(fake, "export-baseline", _state_zip("older"), _state_zip("newer"))
    newer_run = fake.state.runs[-1]["id"]

    def delete_run(fake):  # GitHub deletes a run's artifacts with it
        fake.state.runs = [r for r in fake.state.runs if r["id"] != newer_run]
        for aid in [a for a, art in fake.state.artifacts.items() if art["run"] == newer_run]:
            del fake.state.artifacts[aid]

    fake.before(method="GET", path=r"/actions/artifacts$", action=delete_run)
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output
    state = read_state(tmp_path / "base" / "baseline.json")
    assert [m.result.message for ms in state.cells.values() for m in ms] == ["older"]


def _delete_comment(fake):
    fake.state.comments.pop(500, None)


@pytest.mark.parametrize("body", ["/export-check", "/export-check frobnicate"])
def test_a_command_deleted_before_its_reaction_is_still_answered(fake, gh, body):
    event = comment_event(fake, body)
    fake.before(method="POST", path=r"/issues/comments/500/reactions$", action=_delete_comment)
    result = gh("command", "--dispatch", "export-conformance.yml", event=event)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert 500 not in fake.state.reactions


def test_a_pr_closed_while_its_run_ran_gets_nothing_and_the_job_passes(fake, gh, tmp_path):
    from bot.diff.model import write_report

    sha = fake.state.refs["heads/feature"]
    event = workflow_run_event(repo=fake.repo, run_id=9, head_sha=sha, pr_numbers=[1])
    fake.close_pull(1, merged=True)
    path = tmp_path / "report.json"
    write_report(make_report(head_sha=sha), path)
    result = gh("comment", "--report", str(path), event=event, env={"GITHUB_RUN_ID": "9"})
    assert result.exit_code == 0, result.output
    assert "#1 is closed" in result.output
    assert fake.bot_comments(1) == [] and not fake.state.statuses.get(sha)
