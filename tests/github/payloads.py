"""GitHub objects for the fake server and event payloads for the entry points, built from `@octokit/webhooks-examples`."""

from __future__ import annotations

import copy
import json
from functools import lru_cache

from tests.conftest import NPM

EXAMPLES = NPM / "@octokit" / "webhooks-examples" / "api.github.com" / "index.json"
STAMP = "2026-11-29T12:00:00Z"


@lru_cache(maxsize=1)
def _examples() -> dict[str, list[dict]]:
    return {e["name"]: e["examples"] for e in json.loads(EXAMPLES.read_text(encoding="utf-8"))}


def example(event: str, action: str | None = None) -> dict:
    """A deep copy of the first real payload of `event` (with `action`)."""
    for payload in _examples()[event]:
        if action is None or payload.get("action") == action:
            return copy.deepcopy(payload)
    raise KeyError(f"no {event}.{action} example in {EXAMPLES}")


def user(login: str, uid: int, kind: str = "User") -> dict:
    obj = example("pull_request", "opened")["sender"]
    api = f"https://api.github.com/users/{login}"
    obj.update(
        login=login,
        id=uid,
        node_id=f"U_{uid}",
        type=kind,
        url=api,
        html_url=f"https://github.com/{login}",
        followers_url=f"{api}/followers",
        repos_url=f"{api}/repos",
        site_admin=False,
    )
    return obj


def repository(full_name: str, rid: int, base: str) -> dict:
    obj = example("pull_request", "opened")["repository"]
    owner, name = full_name.split("/")
    obj.update(
        id=rid,
        node_id=f"R_{rid}",
        name=name,
        full_name=full_name,
        owner=user(owner, rid + 1000),
        url=f"{base}/repos/{full_name}",
        html_url=f"https://github.com/{full_name}",
        default_branch="main",
    )
    return obj


def issue_comment_event(
    *, repo: dict, number: int, comment_id: int, body: str, author: dict, on_pr: bool = True, action: str = "created"
) -> dict:
    """A real `issue_comment` payload adapted to the fake's state (the examples are all on plain issues)."""
    event = example("issue_comment", action)
    event["repository"] = repo
    event["issue"].update(number=number, url=f"{repo['url']}/issues/{number}")
    if on_pr:
        event["issue"]["pull_request"] = {
            "url": f"{repo['url']}/pulls/{number}",
            "html_url": f"{repo['html_url']}/pull/{number}",
            "diff_url": "",
            "patch_url": "",
        }
    else:
        event["issue"].pop("pull_request", None)
    event["comment"].update(id=comment_id, body=body, user=author)
    event["sender"] = author
    return event


def workflow_run_event(
    *,
    repo: dict,
    run_id: int,
    head_sha: str,
    pr_numbers: list[int],
    head_branch: str = "feature",
    head_repo: dict | None = None,
    path: str = ".github/workflows/export-conformance.yml",
    event_name: str = "pull_request",
) -> dict:
    """`head_repo`: the fork a fork PR's run came from (GitHub then lists no pull request); `path`: the
    workflow file of the run (a fork can reuse a workflow's name, not its path in this repository)."""
    event = example("workflow_run", "completed")
    event["repository"] = repo
    run = event["workflow_run"]
    run.update(
        id=run_id,
        event=event_name,  # the example's is `workflow_dispatch`; a PR's run is the common case
        head_sha=head_sha,
        head_branch=head_branch,
        head_repository=head_repo or repo,
        path=path,
        html_url=f"{repo['html_url']}/actions/runs/{run_id}",
        pull_requests=[
            {
                "number": n,
                "id": n,
                "url": f"{repo['url']}/pulls/{n}",
                "head": {"ref": "x", "sha": head_sha, "repo": {"id": 1, "url": "", "name": ""}},
                "base": {"ref": "main", "sha": "0" * 40, "repo": {"id": 1, "url": "", "name": ""}},
            }
            for n in pr_numbers
        ],
    )
    return event


def pull_request_event(action: str, *, repo: dict, number: int, head_sha: str) -> dict:
    event = example("pull_request", action)
    event["repository"] = repo
    event["number"] = number
    event["pull_request"].update(number=number)
    event["pull_request"]["head"]["sha"] = head_sha
    return event


def push_event(*, repo: dict, after: str) -> dict:
    event = example("push")
    event["repository"] = repo
    event.update(ref="refs/heads/main", after=after)
    return event
