"""Event payloads: the fields the bot reads, and a payload of the wrong shape as one EventError naming the field."""

from __future__ import annotations

import pytest

from bot.publish.events import CommentEvent, EventError, RunEvent


def comment_event(**comment) -> dict:
    body = {"id": 7, "body": "/export-check", "user": {"login": "octocat", "type": "User"}, **comment}
    return {
        "action": "created",
        "issue": {"number": 3, "pull_request": {"url": "https://api.github.com/repos/o/r/pulls/3"}},
        "comment": body,
    }


def test_a_comment_event_keeps_its_fields():
    event = CommentEvent.from_payload(comment_event())
    assert (event.number, event.comment_id, event.body, event.author, event.on_pull_request) == (
        3,
        7,
        "/export-check",
        "octocat",
        True,
    )


@pytest.mark.parametrize(
    "payload, field",
    [
        (comment_event(body=5), "`comment.body` is int"),
        (comment_event(user={"login": ["x"]}), "`comment.user.login` is list"),
        (comment_event(id="7"), "`comment.id` is str"),
        ({"issue": [], "comment": {}}, "list indices"),
        ({"issue": {"number": 1}, "comment": "hi"}, "'str' object has no attribute 'get'"),
    ],
)
def test_a_comment_event_of_the_wrong_shape_names_the_field(payload, field):
    with pytest.raises(EventError, match="not an issue_comment event") as raised:
        CommentEvent.from_payload(payload)
    assert field in str(raised.value)


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"workflow_run": {"pull_requests": [{"number": "3"}]}}, "`pull_requests[].number` is str"),
        ({"workflow_run": {"pull_requests": [5]}}, "argument of type 'int'"),
        ({"workflow_run": {"head_sha": 5}}, "`workflow_run.head_sha` is int"),
        ({"workflow_run": {"event": "workflow_dispatch", "display_title": 5}}, "`workflow_run.display_title` is int"),
        ({"pull_request": {"head": {"sha": "a"}}}, "missing 'number'"),
    ],
)
def test_a_run_event_of_the_wrong_shape_names_the_field(payload, field):
    with pytest.raises(EventError, match="not a workflow_run or pull_request event") as raised:
        RunEvent.from_payload(payload)
    assert field in str(raised.value)


def test_an_event_without_a_run_or_pull_request_finds_nothing():
    assert RunEvent.from_payload({"action": "completed"}) == RunEvent(None, (), None)
