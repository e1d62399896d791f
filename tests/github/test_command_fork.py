"""`/export-check` on a fork PR: never a dispatched run on the default branch; the PR's own run re-run instead."""

from __future__ import annotations

import pytest

from tests.github.conftest import add_pr_report, comment_event, make_report

FORK = "someone/Hello-World"
HEAD = "f" * 40


def _fork_pr(fake) -> None:
    fake.open_pull(9, "patch-1", fork=FORK, head_sha=HEAD)


def _command(fake, gh, body: str):
    return gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, body, number=9))


def test_export_check_on_a_fork_reruns_its_own_run_and_dispatches_nothing(fake, gh):
    _fork_pr(fake)
    run = add_pr_report(fake, make_report(head_sha=HEAD), branch="patch-1", head_repo=FORK)
    result = _command(fake, gh, "/export-check")
    assert result.exit_code == 0, result.output
    assert fake.state.dispatches == [], "a dispatched run would run the fork's code on the default branch"
    assert fake.run(run)["attempt"] == 2 and fake.run(run)["event"] == "pull_request"
    [reply] = fake.bot_comments(9)
    assert f"run {run}" in reply["body"] and "read-only token and its own cache scope" in reply["body"]
    assert fake.state.reactions[500] == ["eyes"]


@pytest.mark.parametrize("body", ["/export-check full", "/export-check probe", "/export-check BertModel"])
def test_run_kinds_that_need_a_dispatch_are_refused_on_a_fork_with_the_way_on(fake, gh, body):
    _fork_pr(fake)
    add_pr_report(fake, make_report(head_sha=HEAD), branch="patch-1", head_repo=FORK)
    assert _command(fake, gh, body).exit_code == 0
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]
    [reply] = fake.bot_comments(9)
    assert "nothing was started" in reply["body"] and "Comment `/export-check`" in reply["body"]


def test_a_fork_with_no_run_for_its_head_is_told_how_to_get_one(fake, gh):
    _fork_pr(fake)
    add_pr_report(fake, make_report(head_sha="e" * 40), branch="patch-1", head_repo=FORK)  # an older head's
    # Another repository's run of the same head and branch name is not the PR's own.
    fake.add_run("export-conformance.yml", head_sha=HEAD, branch="patch-1", event="pull_request")
    assert _command(fake, gh, "/export-check").exit_code == 0
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]
    assert all(r["attempt"] == 1 for r in fake.state.runs)
    assert "there is none for its head" in fake.bot_comments(9)[0]["body"]


def test_a_fork_run_waiting_for_approval_is_not_rerun_but_pointed_at(fake, gh):
    _fork_pr(fake)
    run = fake.add_run("export-conformance.yml", head_sha=HEAD, branch="patch-1", event="pull_request",
                       head_repo=FORK, status="completed", conclusion="action_required")  # fmt: skip
    assert _command(fake, gh, "/export-check").exit_code == 0
    assert fake.run(run)["attempt"] == 1 and fake.state.dispatches == []
    assert "waiting for a maintainer to approve it" in fake.bot_comments(9)[0]["body"]


def test_a_dispatched_run_stops_on_a_forks_head_before_any_job_checks_it_out(fake, gh):
    """The `pinned` job of conformance.yml: an older caller, or a dispatch by hand, naming a fork PR."""
    _fork_pr(fake)
    assert gh("verify-sha", "--pr", "9", "--sha", HEAD).exit_code == 0  # the head alone: unchanged
    result = gh("verify-sha", "--same-repository", "--pr", "9", "--sha", HEAD)
    assert result.exit_code == 1 and f"in {FORK}, not in this repository" in result.output
    assert gh("verify-sha", "--same-repository", "--pr", "1", "--sha", fake.state.refs["heads/feature"]).exit_code == 0
