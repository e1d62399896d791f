"""The schema check itself: it must catch a body GitHub would never send."""

from __future__ import annotations

import json

from tests.github import openapi


def test_a_valid_status_passes_and_a_wrong_one_is_caught(fake):
    status = {
        "url": "https://x",
        "avatar_url": None,
        "id": 1,
        "node_id": "S",
        "state": "success",
        "description": None,
        "target_url": None,
        "context": "export-conformance",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "creator": fake.bot,
    }
    template = "/repos/{owner}/{repo}/statuses/{sha}"
    assert openapi.problems(template, "POST", 201, json.dumps(status).encode()) == []
    wrong = dict(status, id="one")
    assert any(
        "'one' is not of type 'integer'" in p
        for p in openapi.problems(template, "POST", 201, json.dumps(wrong).encode())
    )
    missing = {k: v for k, v in status.items() if k != "context"}
    assert any(
        "'context' is a required property" in p
        for p in openapi.problems(template, "POST", 201, json.dumps(missing).encode())
    )


def test_bodies_where_none_is_described_are_caught():
    assert openapi.problems("/repos/{owner}/{repo}/issues/comments/{comment_id}", "DELETE", 204, b"{}")


def test_every_route_of_the_fake_is_a_documented_endpoint():
    from tests.github.routes import ROUTES

    spec, _ = openapi._spec()
    for method, template, _, _ in ROUTES:
        assert method.lower() in spec["paths"][template], (method, template)
