"""Transient GitHub failures are retried within a bound; anything else becomes one clear `GitHubError`."""

from __future__ import annotations

import pytest

from bot.publish.github_api import GitHubClient, GitHubError, RetryPolicy

FAST = RetryPolicy(total=4, backoff=0.01, write_interval=0, secondary_rate_wait=0.01)


@pytest.fixture
def client(fake):
    return GitHubClient(fake.full_name, fake.token, api_url=fake.url, policy=FAST)


def _count(fake, method, suffix):
    return sum(1 for m, p in fake.requests if m == method and p.endswith(suffix))


@pytest.mark.parametrize(
    "method,call,suffix",
    [
        ("GET", lambda c: c.list_comments(1), "/issues/1/comments"),
        ("POST", lambda c: c.create_comment(1, "hi"), "/issues/1/comments"),
        ("PATCH", lambda c: c.edit_pull(1, title="t"), "/pulls/1"),
        ("POST", lambda c: c.set_status("a" * 40, "success", "ok"), "/statuses/" + "a" * 40),
    ],
)
def test_502s_are_retried_and_succeed(fake, client, method, call, suffix):
    fake.inject("status", method=method, path=suffix + "$", times=3, status=502)
    call(client)
    assert _count(fake, method, suffix) == 4


def test_a_secondary_rate_limit_is_waited_out(fake, client):
    fake.inject("rate_limit", method="POST", path=r"/issues/1/comments$", times=1)
    client.create_comment(1, "hi")
    assert _count(fake, "POST", "/issues/1/comments") == 2
    assert [c["body"] for c in fake.bot_comments(1)] == ["hi"]


def test_connection_resets_are_retried(fake, client):
    fake.inject("reset", method="GET", path=r"/pulls/1$", times=2)
    assert client.pull_request(1).head_ref == "feature"
    assert _count(fake, "GET", "/pulls/1") == 3


def test_slow_responses_still_succeed(fake, client):
    fake.inject("slow", method="GET", path=r"/pulls/1$", times=1, seconds=0.2)
    assert client.pull_request(1).number == 1


def test_persistent_5xx_fail_after_the_bound_with_what_failed(fake, client):
    fake.inject("status", method="GET", path=r"/pulls/1$", times=100, status=503)
    with pytest.raises(GitHubError, match=r"read pull request #1: HTTP 503") as info:
        client.pull_request(1)
    assert info.value.status == 503
    assert _count(fake, "GET", "/pulls/1") == 1 + FAST.total


def test_other_errors_are_not_retried(fake, client):
    with pytest.raises(GitHubError, match=r"read pull request #99: HTTP 404"):
        client.pull_request(99)
    assert _count(fake, "GET", "/pulls/99") == 1


def test_bad_credentials_say_so(fake):
    client = GitHubClient(fake.full_name, "wrong", api_url=fake.url, policy=FAST)
    with pytest.raises(GitHubError, match="HTTP 401 Bad credentials"):
        client.list_comments(1)


def test_an_unreachable_server_is_a_github_error(fake):
    client = GitHubClient(
        fake.full_name, fake.token, api_url="http://127.0.0.1:9", policy=RetryPolicy(total=1, backoff=0.01)
    )
    with pytest.raises(GitHubError, match="could not reach GitHub to list the comments of #1"):
        client.list_comments(1)


@pytest.fixture
def impatient(fake):
    """A client that waits at most 30 s for a rate limit: a longer wait fails at once."""
    policy = RetryPolicy(total=4, backoff=0.01, write_interval=0, max_rate_limit_wait=30)
    return GitHubClient(fake.full_name, fake.token, api_url=fake.url, policy=policy)


def test_a_rate_limit_asking_for_too_long_a_wait_fails_at_once(fake, impatient):
    client = impatient
    fake.inject("rate_limit", method="GET", path=r"/pulls/1$", times=1, seconds=3600)
    with pytest.raises(GitHubError, match=r"HTTP 403 GitHub asks to wait 3600s"):
        client.pull_request(1)
    assert _count(fake, "GET", "/pulls/1") == 1


def test_persistent_rate_limits_end_in_a_clear_error(fake):
    client = GitHubClient(
        fake.full_name, fake.token, api_url=fake.url, policy=RetryPolicy(total=1, backoff=0.01, write_interval=0)
    )
    fake.inject("rate_limit", method="GET", path=r"/pulls/1$", times=10, seconds=1)
    with pytest.raises(GitHubError, match=r"read pull request #1: HTTP 403 You have exceeded a secondary rate limit"):
        client.pull_request(1)
    assert _count(fake, "GET", "/pulls/1") == 2


# --- writes that are not idempotent: looked for before they are repeated --------------------


def _posts(fake, suffix):
    return _count(fake, "POST", suffix)


def _branch(fake, client, name="topic"):
    sha = fake.commit({"x.txt": "x\n"}, (fake.state.refs["heads/main"],), "topic")
    client.set_branch(name, sha)
    return sha


def test_a_comment_answered_502_after_it_took_effect_is_posted_once(fake, client):
    fake.inject("status", method="POST", path=r"/issues/1/comments$", times=3, status=502, after=True)
    made = client.create_comment(1, "hello <!-- export-bot:reply-to 5 -->")
    assert [c["body"] for c in fake.bot_comments(1)] == [made.body] and _posts(fake, "/issues/1/comments") == 1


def test_a_comment_lost_on_the_way_in_is_posted_again(fake, client):
    fake.inject("reset", method="POST", path=r"/issues/1/comments$", times=1)
    client.create_comment(1, "hello")
    assert len(fake.bot_comments(1)) == 1 and _posts(fake, "/issues/1/comments") == 2


def test_a_dispatch_answered_502_after_it_took_effect_is_found_by_its_run(fake, client):
    fake.run_list_lag = 3
    fake.inject("status", method="POST", path=r"/dispatches$", times=1, status=502, after=True)
    inputs = {"pr": "1", "sha": "a" * 40, "request": "{}", "comment": "77"}
    run = client.dispatch("export-conformance.yml", "main", inputs, started=lambda r: r.title.endswith("(comment 77)"))
    assert run is not None and [r["id"] for r in fake.state.runs] == [run.id]
    assert _posts(fake, "/dispatches") == 1


def test_a_dispatch_is_not_mistaken_for_another_commands_run(fake, client):
    inputs = {"pr": "1", "sha": "a" * 40, "request": "{}", "comment": "78"}
    client.dispatch("export-conformance.yml", "main", dict(inputs, comment="79"), started=lambda r: False)
    fake.inject("status", method="POST", path=r"/dispatches$", times=1, status=502)
    client.dispatch("export-conformance.yml", "main", inputs, started=lambda r: r.title.endswith("(comment 78)"))
    assert [r["title"][-12:] for r in fake.state.runs] == ["(comment 79)", "(comment 78)"]


def test_a_branch_answered_502_after_it_was_created_is_one_branch(fake, client):
    fake.inject("status", method="POST", path=r"/git/refs$", times=2, status=502, after=True)
    sha = _branch(fake, client)
    assert fake.state.refs["heads/topic"] == sha and _posts(fake, "/git/refs") == 1


def test_a_branch_that_exists_elsewhere_is_not_taken_over(fake, client):
    fake.state.refs["heads/topic"] = fake.state.refs["heads/main"]
    sha = fake.commit({"x.txt": "x\n"}, (fake.state.refs["heads/main"],), "topic")
    fake.inject("status", method="GET", path=r"/git/ref/heads/topic$", times=1, status=404)
    with pytest.raises(GitHubError, match="branch topic already exists at .*nothing was changed"):
        client.set_branch("topic", sha)
    assert fake.state.refs["heads/topic"] == fake.state.refs["heads/main"]


def test_a_pull_request_answered_502_after_it_was_opened_is_one_pr(fake, client):
    _branch(fake, client)
    fake.inject("status", method="POST", path=r"/pulls$", times=2, status=502, after=True)
    made = client.create_pull("topic", "main", "Title", "Body")
    assert [n for n, p in fake.state.pulls.items() if p["head_ref"] == "topic"] == [made.number]
    assert made.title == "Title" and _posts(fake, "/pulls") == 1


def test_an_open_pr_that_already_exists_is_made_ours(fake, client):
    _branch(fake, client)
    fake.open_pull(40, "topic", title="Someone's title")
    made = client.create_pull("topic", "main", "Title", "Body")
    assert made.number == 40 and fake.state.pulls[40]["title"] == "Title" and fake.state.pulls[40]["body"] == "Body"


def test_githubs_reason_is_kept_in_the_error(fake, client):
    client.set_branch("empty", fake.state.refs["heads/main"])
    with pytest.raises(GitHubError, match=r"HTTP 422 Validation Failed \(No commits between main and empty\)"):
        client.create_pull("empty", "main", "t", "b")


def test_deleting_a_branch_whose_answer_was_lost_is_done(fake, client):
    _branch(fake, client)
    fake.inject("status", method="DELETE", path=r"/git/refs/heads/topic$", times=1, status=502, after=True)
    client.delete_branch("topic")
    assert "heads/topic" not in fake.state.refs


def test_a_rate_limited_write_waits_and_is_made_once(fake, client):
    fake.inject("rate_limit", method="POST", path=r"/issues/1/comments$", times=1, seconds=0)
    client.create_comment(1, "hi")
    assert len(fake.bot_comments(1)) == 1 and _posts(fake, "/issues/1/comments") == 2


@pytest.mark.parametrize("force,at_ours", [(False, True), (True, False)])
def test_reference_already_exists_is_done_once_the_branch_is_checked(fake, client, force, at_ours):
    # Another attempt created the branch after this one looked (the GET said 404): GitHub answers
    # 422 "Reference already exists", and the bot checks where the branch is before calling it done.
    sha = fake.commit({"x.txt": "x\n"}, (fake.state.refs["heads/main"],), "topic")
    fake.state.refs["heads/topic"] = sha if at_ours else fake.state.refs["heads/main"]
    fake.inject("status", method="GET", path=r"/git/ref/heads/topic$", times=1, status=404)
    client.set_branch("topic", sha, force=force)
    assert fake.state.refs["heads/topic"] == sha
    assert [s.status for s in fake.sent if s.method == "POST" and s.template.endswith("/git/refs")] == [422]


def test_a_refusal_without_a_message_names_the_field(fake, client):
    with pytest.raises(GitHubError, match=r"HTTP 422 Validation Failed \(head invalid\)"):
        client.create_pull("no-such-branch", "main", "t", "b")


# --- the token's primary rate limit (GITHUB_TOKEN: 1,000 requests an hour per repository) ----


def test_every_answer_says_where_the_tokens_budget_stands(fake, client):
    client.pull_request(1)
    assert fake.budget.used == 1 and fake.budget.refused == 0
    client.pull_request(1)
    assert fake.budget.used == 2


def test_a_spent_budget_fails_the_job_at_once_with_a_clear_error(fake, impatient):
    import time

    from tests.github.fake_github import Budget

    client = impatient
    fake.budget = Budget(limit=1)
    client.pull_request(1)
    started = time.monotonic()
    with pytest.raises(
        GitHubError, match=r"read pull request #1: HTTP 403 .*rate limit.*re-run this job after \d\d:\d\d UTC"
    ) as caught:
        client.pull_request(1)
    # The window resets in an hour: waiting that out would hang the job, so it fails now.
    assert time.monotonic() - started < 10, caught.value
    assert fake.budget.refused >= 1 and fake.state.comments == {}
