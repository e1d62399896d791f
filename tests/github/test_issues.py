"""The adapter's issue calls against the fake: GitHub's filters, pull requests among issues, pages, edits, a commit's PRs."""

from __future__ import annotations

import pytest

from bot.publish.github_api import GitHubClient, GitHubError, RetryPolicy
from tests.github.fake_github import BOT
from tests.github.routes import add_issue, associate

FAST = RetryPolicy(total=4, backoff=0.01, write_interval=0, secondary_rate_wait=0.01)


@pytest.fixture
def client(fake):
    return GitHubClient(fake.full_name, fake.token, api_url=fake.url, policy=FAST)


def test_issues_by_filters_on_creator_state_and_labels_and_leaves_pull_requests_out(fake, client):
    fake.state.pulls[1]["user"] = BOT  # the fixture's PR #1, opened by the bot's account
    mine = add_issue(fake, "mine", "a", labels=("export-bot",))
    theirs = add_issue(fake, "theirs", "b", user="mallory")
    closed = add_issue(fake, "closed", "c", state="closed")
    assert [i.number for i in client.issues_by(BOT)] == [mine]
    assert [i.number for i in client.issues_by(BOT, state="closed")] == [closed]
    assert [i.number for i in client.issues_by(BOT, state="all")] == [mine, closed]
    assert [i.number for i in client.issues_by("mallory")] == [theirs]
    assert [i.number for i in client.issues_by(BOT, labels=("export-bot",))] == [mine]
    assert client.issues_by(BOT, labels=("export-bot", "other")) == []
    # GitHub does list the PR in this endpoint: the raw listing has it, with its `pull_request` key.
    listed = [i for i in client._repo.get_issues(state="open", creator=BOT)]
    assert {i.number for i in listed} == {1, mine} and [i.number for i in listed if i.pull_request] == [1]


def test_every_page_keeps_the_filters(fake, client):
    numbers = [add_issue(fake, f"i{k}", "x") for k in range(165)]
    for k in range(40):
        add_issue(fake, f"other{k}", "y", user="someone")
    found = client.issues_by(BOT)
    assert [i.number for i in found] == numbers
    pages = [p for m, p in fake.requests if m == "GET" and p.endswith("/issues")]
    assert len(pages) == 2  # 100 a page, GitHub's largest


def test_create_edit_close_and_reopen(fake, client):
    made = client.create_issue("title", "body", creator=BOT)
    assert (made.title, made.body, made.state, made.user) == ("title", "body", "open", BOT)
    client.edit_issue(made.number, body="new")
    client.edit_issue(made.number, state="closed", state_reason="completed")
    data = fake.state.issues[made.number]
    assert (data["body"], data["state"], data["state_reason"]) == ("new", "closed", "completed")
    client.edit_issue(made.number, state="open")
    assert fake.state.issues[made.number]["state_reason"] == "reopened"
    with pytest.raises(GitHubError, match=r"edit issue #999: HTTP 404"):
        client.edit_issue(999, body="x")


def test_a_lost_creation_is_found_not_repeated_and_a_refused_one_is_repeated(fake, client):
    fake.inject("status", method="POST", path=r"/issues$", status=502, after=True)
    made = client.create_issue("t", "b", creator=BOT)
    assert [n for n, i in fake.state.issues.items() if i.get("title") == "t"] == [made.number]
    fake.inject("status", method="POST", path=r"/issues$", status=502, times=2)
    again = client.create_issue("t2", "b2", creator=BOT)
    assert [n for n, i in fake.state.issues.items() if i.get("title") == "t2"] == [again.number]


def test_a_rate_limited_listing_is_waited_out(fake, client):
    fake.inject("rate_limit", method="GET", path=r"/issues$", times=1)
    add_issue(fake, "x", "y")
    assert len(client.issues_by(BOT)) == 1


def test_the_pull_requests_of_a_commit(fake, client):
    sha = fake.state.refs["heads/feature"]
    assert client.commit_pulls(fake.state.refs["heads/main"]) == []
    [pull] = client.commit_pulls(sha)  # a commit off the default branch: the open PR whose head it is
    assert (pull.number, pull.head_ref, pull.merged) == (1, "feature", False)
    associate(fake, sha, 1)
    assert [p.number for p in client.commit_pulls(sha)] == [1]
    assert client.commit_pulls("f" * 40) == []  # a commit GitHub does not know: 422, no PR
