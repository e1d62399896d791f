"""`export-bot github pending` and the verdict after it: pending on start, no stale pending or verdict, merge queues."""

from __future__ import annotations

import dataclasses

from bot.diff.model import write_report
from bot.publish.events import RunEvent, command_comment_of, command_kind_of, command_pr_of
from bot.publish.github_api import CommitStatus
from bot.publish.pending import CANCELLED, ConformanceRun, decide, queue_pr, run_of
from tests.github.conftest import make_report
from tests.github.payloads import workflow_run_event


def _event(fake, run_id, action, *, conclusion=None, sha=None, event="pull_request", **extra):
    payload = workflow_run_event(
        repo=fake.repo, run_id=run_id, head_sha=sha or fake.state.refs["heads/feature"], pr_numbers=[1], **extra
    )
    payload["action"] = action
    payload["workflow_run"].update(
        conclusion=conclusion, status="completed" if action == "completed" else action, event=event
    )
    return payload


def _states(fake, sha=None):
    statuses = fake.state.statuses.get(sha or fake.state.refs["heads/feature"], [])
    assert {s["context"] for s in statuses} <= {"export-conformance"}
    return [(s["state"], run_of(s["target_url"])[0]) for s in statuses]


def _comment(fake, gh, tmp_path, run_id, verdict="success", **kw):
    report = tmp_path / f"report-{run_id}.json"
    sha = kw.get("sha") or fake.state.refs["heads/feature"]
    write_report(make_report(head_sha=sha, verdict=verdict, headline=f"run {run_id}"), report)
    event = _event(fake, run_id, "completed", conclusion="success", **kw)
    return gh("comment", "--report", str(report), event=event, env={"GITHUB_RUN_ID": str(run_id)})


def test_a_run_is_pending_from_its_start_with_its_link_until_its_verdict(fake, gh, tmp_path):
    result = gh("pending", event=_event(fake, 40, "requested"))
    assert result.exit_code == 0, result.output
    [status] = fake.state.statuses[fake.state.refs["heads/feature"]]
    assert (
        status["target_url"].endswith("/actions/runs/40/attempts/1")
        and status["description"] == "export-conformance is running"
    )
    assert gh("pending", event=_event(fake, 40, "in_progress")).exit_code == 0  # no second write
    assert _comment(fake, gh, tmp_path, 40).exit_code == 0
    assert _states(fake) == [("pending", 40), ("success", 40)]
    # `in_progress` delivered after the verdict leaves the verdict.
    assert gh("pending", event=_event(fake, 40, "in_progress")).exit_code == 0
    assert _states(fake)[-1] == ("success", 40)


def test_an_older_run_never_overwrites_a_newer_runs_pending_or_verdict(fake, gh, tmp_path):
    gh("pending", event=_event(fake, 50, "requested"))
    gh("pending", event=_event(fake, 51, "requested"))  # a re-run or an /export-check of the same head
    # Run 50 reports while 51 is still pending: 51's pending stays (its report is not in yet).
    assert "left as a newer run set it" in _comment(fake, gh, tmp_path, 50).output
    assert not fake.state.check_runs  # nor a check run: its verdict does not stand
    assert _comment(fake, gh, tmp_path, 51, verdict="failure").exit_code == 0
    assert [c["conclusion"] for c in fake.state.check_runs.values()] == ["failure"]
    # Run 50 again, late: its verdict, its pending and its cancellation all stay out.
    assert "left as set by run 51" in _comment(fake, gh, tmp_path, 50).output
    gh("pending", event=_event(fake, 50, "in_progress"))
    gh("pending", event=_event(fake, 50, "completed", conclusion="cancelled"))
    assert _states(fake) == [("pending", 50), ("pending", 51), ("failure", 51)]


def test_a_cancelled_run_clears_only_its_own_pending(fake, gh):
    gh("pending", event=_event(fake, 60, "requested"))
    result = gh("pending", event=_event(fake, 60, "completed", conclusion="cancelled"))
    assert result.exit_code == 0, result.output
    assert _states(fake) == [("pending", 60), ("error", 60)]
    assert fake.state.statuses[fake.state.refs["heads/feature"]][-1]["description"] == CANCELLED
    # A finished run's completion changes nothing (its verdict comes from the comment job).
    gh("pending", event=_event(fake, 61, "completed", conclusion="success"))
    assert len(_states(fake)) == 2


def test_a_dispatched_run_is_pending_on_the_pr_head_its_title_names(fake, gh):
    title = "export-conformance #1: /export-check rerun (comment 77)"
    event = _event(fake, 70, "requested", sha=fake.state.refs["heads/main"], event="workflow_dispatch")
    event["workflow_run"]["display_title"] = title
    assert gh("pending", event=event).exit_code == 0
    assert _states(fake) == [("pending", 70)] and not fake.state.statuses.get(fake.state.refs["heads/main"])


def test_a_merge_queue_commit_gets_the_status_and_its_pr_hears_only_of_a_broken_cell(fake, gh, tmp_path):
    queue = fake.commit({"src/x.py": "x = 1\n"}, (fake.state.refs["heads/main"],), "merge queue")
    branch = f"gh-readonly-queue/main/pr-1-{fake.state.refs['heads/feature']}"
    kw = dict(sha=queue, event="merge_group", head_branch=branch)
    assert gh("pending", event=_event(fake, 80, "requested", **kw)).exit_code == 0
    result = _comment(fake, gh, tmp_path, 80, **kw)
    assert result.exit_code == 0, result.output
    assert _states(fake, queue) == [("pending", 80), ("success", 80)] and not fake.bot_comments(1)
    result = _comment(fake, gh, tmp_path, 81, verdict="failure", **kw)
    assert result.exit_code == 0, result.output
    assert _states(fake, queue)[-1] == ("failure", 81) and len(fake.bot_comments(1)) == 1
    assert not fake.state.statuses.get(fake.state.refs["heads/feature"]), "the PR head's own status is untouched"


def test_decisions_and_what_they_read():
    run = ConformanceRun(9, "https://github.com/o/r/actions/runs/9", "requested", None, "pull_request", "a" * 40, "")
    newer = CommitStatus("pending", "", "https://github.com/o/r/actions/runs/10")
    assert decide(run, None) == ("pending", "export-conformance is running") and decide(run, newer) is None
    assert queue_pr("gh-readonly-queue/main/pr-123-" + "f" * 40) == 123
    assert queue_pr("feature") is None and queue_pr("gh-readonly-queue/main/pr-1-short") is None
    assert run_of("https://github.com/o/r/actions/runs/12/attempts/2") == (12, 2) and run_of(None) == (0, 0)
    assert run_of("https://github.com/o/r/actions/runs/12") == (12, 1)  # a link from before attempts were named
    # A run the bot dispatched for its own PR (the obsolete-skip PR's check) answers no comment.
    own = "export-conformance #7: /export-check rerun (comment )"
    assert (command_pr_of(own), command_kind_of(own), command_comment_of(own)) == (7, "rerun", None)


def test_an_event_that_is_not_a_workflow_run_is_exit_2_with_what_to_do(gh):
    result = gh("pending", event={"pull_request": {"number": 1}})
    assert result.exit_code == 2 and "runs on workflow_run" in result.output


def _no_report(fake, gh, tmp_path, run_id, conclusion="failure", **kw):
    event = _event(fake, run_id, "completed", conclusion=conclusion, **kw)
    return gh("comment", "--report", str(tmp_path / "none" / "report.json"), event=event)


def test_a_run_that_ended_without_a_report_ends_its_pending_with_error(fake, gh, tmp_path):
    """An install outage or a lost runner: the required check must not say "running" on a finished run."""
    gh("pending", event=_event(fake, 70, "requested"))
    result = _no_report(fake, gh, tmp_path, 70)
    assert result.exit_code == 2 and "cannot read the report" in result.output
    assert _states(fake) == [("pending", 70), ("error", 70)]
    [*_, status] = fake.state.statuses[fake.state.refs["heads/feature"]]
    assert status["description"].startswith("the run ended without a report")
    assert status["target_url"].endswith("/actions/runs/70/attempts/1")


def test_a_run_without_a_report_leaves_a_verdict_and_a_newer_runs_pending(fake, gh, tmp_path):
    gh("pending", event=_event(fake, 71, "requested"))
    assert _comment(fake, gh, tmp_path, 71).exit_code == 0
    _no_report(fake, gh, tmp_path, 71)  # a re-run of the comment job that found no artifact: the verdict stays
    gh("pending", event=_event(fake, 72, "requested"))
    _no_report(fake, gh, tmp_path, 71)
    assert _states(fake) == [("pending", 71), ("success", 71), ("pending", 72)]


def _dispatched(fake, run_id, action, kind, conclusion=None):
    event = _event(
        fake, run_id, action, conclusion=conclusion, sha=fake.state.refs["heads/main"], event="workflow_dispatch"
    )
    event["workflow_run"]["display_title"] = f"export-conformance #1: /export-check {kind} (comment 77)"
    return event


def _contexts(fake):
    return [
        (s["context"], s["state"], run_of(s["target_url"])[0])
        for s in fake.state.statuses[fake.state.refs["heads/feature"]]
    ]


def test_a_command_run_of_part_of_the_pr_never_sets_the_gate(fake, gh, tmp_path):
    """`/export-check BertModel` on a PR whose own run failed: green on one model must not turn the PR green."""
    gh("pending", event=_event(fake, 90, "requested"))
    assert _comment(fake, gh, tmp_path, 90, verdict="failure").exit_code == 0
    assert gh("pending", event=_dispatched(fake, 91, "requested", "models")).exit_code == 0
    report = tmp_path / "report-91.json"
    write_report(make_report(head_sha=fake.state.refs["heads/feature"], verdict="success", headline="run 91"), report)
    result = gh("comment", "--report", str(report), event=_dispatched(fake, 91, "completed", "models", "success"))
    assert result.exit_code == 0, result.output
    assert _contexts(fake) == [
        ("export-conformance", "pending", 90),
        ("export-conformance", "failure", 90),
        ("export-conformance/command", "pending", 91),
        ("export-conformance/command", "success", 91),
    ]
    # Its report has a sticky of its own: the gate's sticky still holds the PR's run.
    bodies = sorted(c["body"].splitlines()[0] for c in fake.bot_comments(1))
    assert bodies == ["<!-- export-bot:command -->", "<!-- export-bot:conformance -->"]
    assert "export-conformance/command" in next(c["body"] for c in fake.bot_comments(1) if "command -->" in c["body"])


def test_a_full_command_run_and_a_rerun_set_the_gate(fake, gh, tmp_path):
    for run_id, kind in ((95, "full"), (96, "rerun")):
        assert gh("pending", event=_dispatched(fake, run_id, "requested", kind)).exit_code == 0
        report = tmp_path / f"report-{run_id}.json"
        write_report(make_report(head_sha=fake.state.refs["heads/feature"], verdict="success", headline="x"), report)
        result = gh("comment", "--report", str(report), event=_dispatched(fake, run_id, "completed", kind, "success"))
        assert result.exit_code == 0, result.output
    assert {context for context, _, _ in _contexts(fake)} == {"export-conformance"}
    assert _contexts(fake)[-1] == ("export-conformance", "success", 96)


def test_a_dispatched_run_whose_title_names_no_kind_is_a_command_run():
    run = ConformanceRun(9, "u", "requested", None, "workflow_dispatch", "a" * 40, "x #1: /export-check (comment 3)")
    assert run.context == "export-conformance/command"
    assert ConformanceRun(9, "u", "requested", None, "pull_request", "a" * 40, "").context == "export-conformance"


def test_a_pull_request_runs_title_cannot_make_it_a_command_run():
    """A fork writes its own run-name: only a dispatched run's title (the default branch's) is read for a kind."""
    title = "export-conformance #1: /export-check models (comment 3)"
    assert ConformanceRun(9, "u", "requested", None, "pull_request", "a" * 40, title).context == "export-conformance"
    payload = {"workflow_run": {"id": 9, "event": "pull_request", "display_title": title, "head_sha": "a" * 40}}
    assert RunEvent.from_payload(payload).status_context == "export-conformance"


def _attempt(payload, attempt):
    payload["workflow_run"]["run_attempt"] = attempt
    return payload


def test_a_rerun_attempt_sets_pending_again_and_its_own_verdict(fake, gh, tmp_path):
    """A re-run keeps the run id: only the attempt in the status's link tells its pending from the verdict before."""
    gh("pending", event=_event(fake, 60, "requested"))
    assert _comment(fake, gh, tmp_path, 60, verdict="failure").exit_code == 0
    gh("pending", event=_attempt(_event(fake, 60, "requested"), 2))
    statuses = fake.state.statuses[fake.state.refs["heads/feature"]]
    assert (statuses[-1]["state"], statuses[-1]["target_url"].rsplit("/runs/", 1)[1]) == ("pending", "60/attempts/2")
    # Attempt 1's events, delivered late, leave attempt 2's pending as it is.
    gh("pending", event=_attempt(_event(fake, 60, "in_progress"), 1))
    assert fake.state.statuses[fake.state.refs["heads/feature"]][-1]["target_url"].endswith("/60/attempts/2")
    report = tmp_path / "report-60b.json"
    a2 = make_report(head_sha=fake.state.refs["heads/feature"], verdict="success", headline="a2")
    # The report job's --run-url names its attempt (conformance.yml): attempt 2's report says so.
    write_report(dataclasses.replace(a2, run_url=f"{fake.repo['html_url']}/actions/runs/60/attempts/2"), report)
    event = _attempt(_event(fake, 60, "completed", conclusion="success"), 2)
    assert gh("comment", "--report", str(report), event=event).exit_code == 0
    last = fake.state.statuses[fake.state.refs["heads/feature"]][-1]
    assert (last["state"], last["target_url"].rsplit("/runs/", 1)[1]) == ("success", "60/attempts/2")


def test_a_run_awaiting_approval_is_not_running(fake, gh):
    """A first-time contributor's run is recorded `completed`/`action_required` until a maintainer approves it."""
    waiting = _event(fake, 65, "requested", conclusion="action_required")
    waiting["workflow_run"]["status"] = "completed"
    gh("pending", event=waiting)
    [status] = fake.state.statuses[fake.state.refs["heads/feature"]]
    assert status["state"] == "pending" and status["description"].startswith("waiting for a maintainer to approve")
    gh("pending", event=_event(fake, 65, "in_progress"))  # approved: now it runs
    last = fake.state.statuses[fake.state.refs["heads/feature"]][-1]
    assert (last["state"], last["description"]) == ("pending", "export-conformance is running")
