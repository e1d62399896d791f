"""The sticky comment and the status: twenty runs (two concurrent) leave one comment with the latest report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from bot.diff.model import write_report
from bot.report import COMMENT_MARKER
from tests.conftest import ROOT
from tests.github import payloads as P
from tests.github.conftest import make_report
from tests.github.payloads import workflow_run_event


def _event(fake, run_id, prs=(1,)):
    return workflow_run_event(
        repo=fake.repo, run_id=run_id, head_sha=fake.state.refs["heads/feature"], pr_numbers=list(prs)
    )


def _report(fake, tmp_path, n, verdict="success"):
    path = tmp_path / f"report-{n}.json"
    write_report(
        make_report(head_sha=fake.state.refs["heads/feature"], verdict=verdict, headline=f"report number {n}"), path
    )
    return path


def _subprocess(fake, config, tmp_path, n, run_id):
    event = tmp_path / f"event-{n}.json"
    event.write_text(json.dumps(_event(fake, run_id)), encoding="utf-8")
    env = dict(
        os.environ,
        GITHUB_REPOSITORY=fake.full_name,
        GITHUB_TOKEN=fake.token,
        GITHUB_API_URL=fake.url,
        GITHUB_EVENT_PATH=str(event),
        GITHUB_RUN_ID=str(run_id),
        GITHUB_STEP_SUMMARY=str(tmp_path / f"s{n}.md"),
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "github",
            "--config",
            str(config),
            "comment",
            "--report",
            str(_report(fake, tmp_path, n)),
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_twenty_runs_two_concurrent_leave_one_comment_with_the_latest_report(fake, gh, config, tmp_path):
    # The racers are subprocesses that may start far apart on a loaded machine: the first one's
    # held request must not time out (and be retried into the barrier alone).
    config.write_text(config.read_text() + "github-timeout = 300\n", encoding="utf-8")
    for n in range(1, 19):
        result = gh(
            "comment", "--report", str(_report(fake, tmp_path, n)), event=_event(fake, n), env={"GITHUB_RUN_ID": str(n)}
        )
        assert result.exit_code == 0, result.output
        assert len(fake.bot_comments(1)) == 1
    # Runs 19 and 20 race: neither sees the other's comment before creating its own.
    fake.state.comments.clear()
    fake.gate(path=r"/issues/1/comments$", method="GET", parties=2)
    raced = len(fake.requests)
    results = [None, None]
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, _subprocess(fake, config, tmp_path, 19 + i, 19 + i)))
        for i in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert all(r is not None and r.returncode == 0 for r in results), [r and r.stderr for r in results]
    # One by the first 18 runs, then (at least) one by each racer.
    assert fake.created_comments >= 3, "\n".join(f"{m} {p}" for m, p in fake.requests[raced:])
    comments = fake.bot_comments(1)
    assert len(comments) == 1
    assert comments[0]["body"].startswith(COMMENT_MARKER)
    assert "report number 20" in comments[0]["body"].lower()
    statuses = fake.state.statuses[fake.state.refs["heads/feature"]]
    assert {s["context"] for s in statuses} == {"export-conformance"} and statuses[-1]["state"] == "success"


def test_an_older_run_finishing_late_does_not_overwrite_a_newer_report(fake, gh, tmp_path):
    assert (
        gh(
            "comment", "--report", str(_report(fake, tmp_path, 5)), event=_event(fake, 5), env={"GITHUB_RUN_ID": "5"}
        ).exit_code
        == 0
    )
    assert (
        gh(
            "comment", "--report", str(_report(fake, tmp_path, 4)), event=_event(fake, 4), env={"GITHUB_RUN_ID": "4"}
        ).exit_code
        == 0
    )
    [comment] = fake.bot_comments(1)
    assert "report number 5" in comment["body"].lower()


def test_an_older_run_finishing_late_leaves_the_status_to_the_newer_run(fake, gh, tmp_path):
    # Run 5 reported a failure; run 4 (say, an old comment job re-run: it keeps its run id) passed.
    sha = fake.state.refs["heads/feature"]
    newer = gh(
        "comment",
        "--report",
        str(_report(fake, tmp_path, 5, "failure")),
        event=_event(fake, 5),
        env={"GITHUB_RUN_ID": "5"},
    )
    older = gh(
        "comment", "--report", str(_report(fake, tmp_path, 4)), event=_event(fake, 4), env={"GITHUB_RUN_ID": "4"}
    )
    assert newer.exit_code == 0 and older.exit_code == 0, older.output
    [comment] = fake.bot_comments(1)
    assert "❌" in comment["body"] and "report number 5" in comment["body"].lower()
    assert [s["state"] for s in fake.state.statuses[sha]] == ["failure"]
    assert "status left as set by run 5" in older.output


def test_the_same_run_again_sets_its_status_again(fake, gh, tmp_path):
    sha = fake.state.refs["heads/feature"]
    for _ in range(2):
        assert (
            gh(
                "comment",
                "--report",
                str(_report(fake, tmp_path, 3)),
                event=_event(fake, 3),
                env={"GITHUB_RUN_ID": "3"},
            ).exit_code
            == 0
        )
    assert [s["state"] for s in fake.state.statuses[sha]] == ["success", "success"]


def test_other_users_quoting_the_marker_are_left_alone(fake, gh, tmp_path):
    fake.state.comments[1] = {
        "issue": 1,
        "body": COMMENT_MARKER + " quoted",
        "user": "Codertocat",
        "created": "2026-01-01T00:00:00Z",
    }
    assert gh("comment", "--report", str(_report(fake, tmp_path, 1)), event=_event(fake, 1)).exit_code == 0
    assert fake.state.comments[1]["body"].endswith("quoted") and len(fake.bot_comments(1)) == 1


def test_verdicts_map_to_status_states(fake, gh, tmp_path):
    sha = fake.state.refs["heads/feature"]
    for verdict, state in (("failure", "failure"), ("neutral", "error"), ("success", "success")):
        assert gh("comment", "--report", str(_report(fake, tmp_path, 1, verdict)), event=_event(fake, 1)).exit_code == 0
        assert fake.state.statuses[sha][-1]["state"] == state


def test_fork_pr_found_from_the_head_owner_and_branch_in_one_request(fake, gh, tmp_path):
    # Thirty-one open PRs: listing them all would take two pages; the head filter takes one request.
    for n in range(10, 41):
        fake.open_pull(n, f"topic-{n}", fork=f"user{n}/Hello-World", head_sha=f"{n:040d}")
    fake.open_pull(7, "patch-1", fork="someone/Hello-World", head_sha="f" * 40)
    fork = P.repository("someone/Hello-World", 4242, fake.url)
    event = workflow_run_event(
        repo=fake.repo, run_id=3, head_sha="f" * 40, pr_numbers=[], head_branch="patch-1", head_repo=fork
    )
    path = tmp_path / "r.json"
    write_report(make_report(head_sha="f" * 40), path)
    assert gh("comment", "--report", str(path), event=event).exit_code == 0
    assert len(fake.bot_comments(7)) == 1 and fake.state.statuses["f" * 40][-1]["state"] == "success"
    listed = [p for m, p in fake.requests if m == "GET" and p.endswith("/pulls") and "/commits/" not in p]
    assert listed == [f"/repos/{fake.full_name}/pulls"]


def test_github_refusing_still_writes_the_summary_and_fails(fake, gh, tmp_path):
    fake.inject("status", method="POST", path=r"/issues/1/comments$", times=100, status=502)
    result = gh("comment", "--report", str(_report(fake, tmp_path, 1)), event=_event(fake, 1))
    assert result.exit_code == 2  # a refusal, not a verdict: exit 1 would read as cells broken
    assert "comment on #1" in result.output and "502" in result.output
    assert "report number 1" in gh.summary.read_text(encoding="utf-8").lower()
    assert fake.bot_comments(1) == []
    # The bound: the first try and four retries, no more.
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/issues/1/comments")) == 5


def test_a_lost_answer_to_the_sticky_comment_is_found_not_posted_again(fake, gh, tmp_path):
    # The comment is created, but the proxy answers 502: the bot re-lists and finds it.
    fake.inject("status", method="POST", path=r"/issues/1/comments$", times=2, status=502, after=True)
    result = gh("comment", "--report", str(_report(fake, tmp_path, 1)), event=_event(fake, 1))
    assert result.exit_code == 0, result.output
    assert fake.created_comments == 1 and len(fake.bot_comments(1)) == 1
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/issues/1/comments")) == 1
    assert fake.state.statuses[fake.state.refs["heads/feature"]][-1]["state"] == "success"


def test_a_lost_answer_to_the_status_is_harmless(fake, gh, tmp_path):
    sha = fake.state.refs["heads/feature"]
    fake.inject("status", method="POST", path=r"/statuses/", times=1, status=502, after=True)
    result = gh("comment", "--report", str(_report(fake, tmp_path, 1, "failure")), event=_event(fake, 1))
    assert result.exit_code == 0, result.output
    [comment] = fake.bot_comments(1)
    # Repeating a status is idempotent: the newest for the context is the one GitHub shows.
    assert {s["state"] for s in fake.state.statuses[sha]} == {"failure"} and "❌" in comment["body"]


def test_a_direct_pull_request_run_posts_on_its_pr(fake, gh, tmp_path):
    from tests.github.payloads import pull_request_event

    for n, action in enumerate(("opened", "synchronize"), start=1):
        event = pull_request_event(action, repo=fake.repo, number=1, head_sha=fake.state.refs["heads/feature"])
        result = gh("comment", "--report", str(_report(fake, tmp_path, n)), event=event, env={"GITHUB_RUN_ID": str(n)})
        assert result.exit_code == 0, result.output
    [comment] = fake.bot_comments(1)
    assert "report number 2" in comment["body"].lower()


def _dispatched(fake, run_id, comment_id, event="workflow_dispatch"):
    # Dispatched on main: GitHub lists no pull request; the title is export-conformance.yml's run-name.
    found = workflow_run_event(repo=fake.repo, run_id=run_id, head_sha="0" * 40, pr_numbers=[])
    found["workflow_run"].update(
        event=event, display_title=f"export-conformance #1: /export-check rerun (comment {comment_id})"
    )
    return found


def _command_comment(fake, cid, issue=1, body="/export-check BertModel"):
    fake.state.comments[cid] = {"issue": issue, "body": body, "user": "Codertocat", "created": "2026-01-01T00:00:00Z"}


def test_a_dispatched_run_finishes_its_command_with_a_rocket(fake, gh, tmp_path):
    _command_comment(fake, 900)
    result = gh("comment", "--report", str(_report(fake, tmp_path, 1, "failure")), event=_dispatched(fake, 7, 900))
    assert result.exit_code == 0, result.output
    assert len(fake.bot_comments(1)) == 1  # the PR found from the report's head SHA
    assert fake.state.reactions[900] == ["rocket"]  # the command was carried out, whatever the verdict


def test_a_dispatched_run_without_a_report_finishes_its_command_confused(fake, gh, tmp_path):
    _command_comment(fake, 901)
    result = gh("comment", "--report", str(tmp_path / "missing" / "report.json"), event=_dispatched(fake, 8, 901))
    assert result.exit_code == 2
    assert "cannot read the report" in result.output and "/actions/runs/8" in result.output
    # One reply saying so, beside the 😕: the command is answered, not left at 👀.
    [reply] = fake.bot_comments(1)
    assert fake.state.reactions[901] == ["confused"] and "left no report" in reply["body"]
    assert "/actions/runs/8" in reply["body"] and not reply["body"].startswith(COMMENT_MARKER)


def test_a_run_title_is_trusted_only_from_dispatched_runs_and_for_commands_on_the_pr(fake, gh, tmp_path):
    _command_comment(fake, 902)
    _command_comment(fake, 903, body="thanks!")
    fake.open_pull(7, "patch-1", fork="someone/Hello-World", head_sha="f" * 40)
    _command_comment(fake, 904, issue=7)
    # A pull_request run's title comes from the PR's own workflow file: it names nothing.
    pull_request_run = _dispatched(fake, 9, 902, "pull_request")
    pull_request_run["workflow_run"].update(head_sha=fake.state.refs["heads/feature"])
    pull_request_run["workflow_run"]["pull_requests"] = _event(fake, 9)["workflow_run"]["pull_requests"]
    assert gh("comment", "--report", str(_report(fake, tmp_path, 1)), event=pull_request_run).exit_code == 0
    for cid in (903, 904):  # not a command; a command on another PR than the report's
        assert (
            gh("comment", "--report", str(_report(fake, tmp_path, 1)), event=_dispatched(fake, 10, cid)).exit_code == 0
        )
    assert (
        gh("comment", "--report", str(_report(fake, tmp_path, 1)), event=_dispatched(fake, 11, 999)).exit_code == 0
    )  # gone
    assert fake.state.reactions == {}


def test_a_dispatched_run_whose_pr_moved_on_posts_nothing_and_stays_green(fake, gh, tmp_path):
    _command_comment(fake, 905)
    old = _report(fake, tmp_path, 1)
    pinned = fake.state.refs["heads/feature"]
    fake.state.refs["heads/feature"] = fake.commit({"src/x.py": "x = 9\n"}, (pinned,), "push")
    result = gh("comment", "--report", str(old), event=_dispatched(fake, 12, 905))
    assert result.exit_code == 0, result.output
    assert "has a new head" in result.output and fake.state.statuses == {}
    # No sticky: the command gets 😕 and one reply saying the head moved.
    [reply] = fake.bot_comments(1)
    assert "has a new head" in reply["body"] and not reply["body"].startswith(COMMENT_MARKER)
    assert fake.state.reactions[905] == ["confused"]


def test_a_head_that_held_no_cell_gets_an_error_status_and_a_comment_saying_what_was_expected(fake, gh, tmp_path):
    """Foreign JUnit (a fork's plain pytest file) is no docs-only change: never a pass, and said (docs/outcomes.md)."""
    from dataclasses import replace

    sha = fake.state.refs["heads/feature"]
    path = tmp_path / "foreign.json"
    headline = "no cell in the head's results (2 testcases, none a cell); no verdict"
    report = make_report(head_sha=sha, verdict="neutral", headline=headline, cells=())
    write_report(
        replace(report, no_cells=True, non_cells=2, foreign=("test_plain::test_ok", "test_plain::test_bad")), path
    )
    result = gh("comment", "--report", str(path), event=_event(fake, 5), env={"GITHUB_RUN_ID": "5"})
    assert result.exit_code == 0, result.output
    [sticky] = fake.bot_comments(1)
    assert "No cell in the results" in sticky["body"] and "No cells ran" not in sticky["body"]
    assert [s["state"] for s in fake.state.statuses[sha]] == ["error"]


def test_a_change_that_runs_no_cell_gets_its_status_and_no_new_comment(fake, gh, tmp_path):
    """A docs-only PR: the required check reports, the conversation stays quiet; a sticky an earlier push
    posted is updated, so it never shows a report the PR no longer has."""
    sha = fake.state.refs["heads/feature"]
    empty = tmp_path / "empty.json"
    write_report(make_report(head_sha=sha, headline="no cell to run", cells=()), empty)
    result = gh("comment", "--report", str(empty), event=_event(fake, 5), env={"GITHUB_RUN_ID": "5"})
    assert result.exit_code == 0, result.output
    assert "no cell ran, no comment" in result.output and fake.bot_comments(1) == []
    assert [s["state"] for s in fake.state.statuses[sha]] == ["success"]
    # A push that ran cells posts the sticky; a later docs-only push then updates it.
    assert gh("comment", "--report", str(_report(fake, tmp_path, 6)), event=_event(fake, 6)).exit_code == 0
    assert gh("comment", "--report", str(empty), event=_event(fake, 7), env={"GITHUB_RUN_ID": "7"}).exit_code == 0
    [sticky] = fake.bot_comments(1)
    assert "No cells ran." in sticky["body"] and "<!-- export-bot:run 7 -->" in sticky["body"]
