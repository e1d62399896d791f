"""The runs the bot's own pushes start (2026: approval-gated) and the run it dispatches: one group, one
ordering, and whichever runs last on the head gives the status and the comment."""

from __future__ import annotations

from tests.github.conftest import comment_event, propose_on_feature
from tests.github.test_attempts import _comment_job, _status, _upload_report
from tests.test_workflows import _group

CONFORMANCE = "export-conformance.yml"


def _apply_with_gated_runs(fake, gh) -> tuple[int, int, str]:
    """`/export-check apply` on PR 1, GitHub gating the run its push starts: (gated run, dispatched run, group)."""
    fake.bot_push_workflow = CONFORMANCE
    propose_on_feature(fake)
    result = gh("apply", "--dispatch", CONFORMANCE, event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 0, result.output
    head = fake.state.refs["heads/feature"]
    [gated] = [r for r in fake.state.runs if r["event"] == "pull_request" and r["head_sha"] == head]
    [dispatched] = [r for r in fake.state.runs if r["event"] == "workflow_dispatch"]
    assert gated["conclusion"] == "action_required" and gated["id"] < dispatched["id"]
    # The caller's concurrency key puts both in one group.
    pull = {"event_name": "pull_request", "event": {"pull_request": {"number": 1}}, "ref": "refs/pull/1/merge"}
    dispatch = {"event_name": "workflow_dispatch", "event": {}, "ref": "refs/heads/main"}
    [inputs] = [d["inputs"] for d in fake.state.dispatches]
    group = _group(CONFORMANCE, pull)
    assert _group(CONFORMANCE, dispatch, inputs) == group
    return gated["id"], dispatched["id"], group


def _pending(fake, gh, run: int, action: str) -> None:
    result = gh("pending", event=fake.run_event(run, action))
    assert result.exit_code == 0, result.output


def test_the_gated_run_approved_late_cancels_the_dispatched_one_and_gives_the_status(fake, gh, tmp_path):
    gated, dispatched, group = _apply_with_gated_runs(fake, gh)
    _pending(fake, gh, gated, "requested")
    assert _status(fake)[::2] == ("pending", "waiting for a maintainer to approve the run; nothing has run yet")
    fake.arrive(dispatched, group, cancel_in_progress=True)
    _pending(fake, gh, dispatched, "in_progress")
    assert _status(fake)[:2] == ("pending", f"{dispatched}/attempts/1")
    # A maintainer approves the bot's run: it enters the PR's group and cancels the dispatched one.
    fake.approve(gated)
    assert fake.arrive(gated, group, cancel_in_progress=True) == [dispatched]
    _pending(fake, gh, dispatched, "completed")  # cancelled: its own pending becomes error
    assert _status(fake)[0] == "error"
    _pending(fake, gh, gated, "in_progress")  # it runs last on the head: it takes the status over
    assert _status(fake) == ("pending", f"{gated}/attempts/1", "export-conformance is running")
    _upload_report(fake, gated, "the gated run", "success")
    fake.finish_run(gated, "success")
    result = _comment_job(fake, gh, tmp_path, fake.run_event(gated, "completed"), "gated")
    assert result.exit_code == 0, result.output
    assert _status(fake)[:2] == ("success", f"{gated}/attempts/1")
    assert "The gated run." in fake.bot_comments(1)[-1]["body"]


def test_a_gated_run_approved_after_the_dispatched_one_reported_reports_last(fake, gh, tmp_path):
    gated, dispatched, group = _apply_with_gated_runs(fake, gh)
    _pending(fake, gh, gated, "requested")
    fake.arrive(dispatched, group, cancel_in_progress=True)
    _pending(fake, gh, dispatched, "in_progress")
    _upload_report(fake, dispatched, "the dispatched run", "failure")
    fake.finish_run(dispatched, "failure")
    assert _comment_job(fake, gh, tmp_path, fake.run_event(dispatched, "completed"), "d").exit_code == 0
    assert _status(fake)[:2] == ("failure", f"{dispatched}/attempts/1")
    # Approved later: it runs last on the same head, so its pending, then its verdict and report, stand.
    fake.approve(gated)
    assert fake.arrive(gated, group, cancel_in_progress=True) == []
    _pending(fake, gh, gated, "in_progress")
    assert _status(fake)[:2] == ("pending", f"{gated}/attempts/1")
    _upload_report(fake, gated, "the gated run", "success")
    fake.finish_run(gated, "success")
    assert _comment_job(fake, gh, tmp_path, fake.run_event(gated, "completed"), "g").exit_code == 0
    assert _status(fake)[:2] == ("success", f"{gated}/attempts/1")
    stickies = [c for c in fake.bot_comments(1) if "export-bot:conformance" in c["body"]]
    assert len(stickies) == 1 and "The gated run." in stickies[0]["body"]


def test_an_older_runs_late_in_progress_event_takes_nothing_over(fake, gh, tmp_path):
    """The exception is for a run that is running now: an event delivered late for a run that GitHub
    cancelled meanwhile leaves the newer run's verdict as it is."""
    gated, dispatched, group = _apply_with_gated_runs(fake, gh)
    fake.approve(gated)
    fake.arrive(gated, group, cancel_in_progress=True)
    late = fake.run_event(gated, "in_progress")
    fake.arrive(dispatched, group, cancel_in_progress=True)  # the dispatched run replaces it
    _upload_report(fake, dispatched, "the dispatched run", "success")
    fake.finish_run(dispatched, "success")
    assert _comment_job(fake, gh, tmp_path, fake.run_event(dispatched, "completed"), "d").exit_code == 0
    assert gh("pending", event=late).exit_code == 0
    assert _status(fake)[:2] == ("success", f"{dispatched}/attempts/1")
