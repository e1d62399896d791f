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


def test_a_rate_limit_asking_for_too_long_a_wait_fails_at_once(fake):
    client = GitHubClient(
        fake.full_name,
        fake.token,
        api_url=fake.url,
        policy=RetryPolicy(total=4, backoff=0.01, write_interval=0, max_rate_limit_wait=30),
    )
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
