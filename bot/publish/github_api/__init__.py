"""The GitHub adapter: every call the bot makes to GitHub, on PyGithub, with bounded retries and one error type.

The one home of PyGithub, requests and urllib3 (docs/github.md). Split as GitHub's REST API and
PyGithub are, by resource; `GitHubClient` is the shared session with one mixin per resource:

- `session`: PyGithub's `Github` for one repository, its auth, the write-once loop;
- `retry`: the retry policy urllib3 follows; `errors`: the error types and `_guard`;
- `records`: the frozen dataclasses the methods return, and their converters;
- `issues`: comments, reactions, labels, issues; `pulls`: pull requests;
- `commits`: statuses, check runs, a commit's PRs and author, the merge base;
- `actions`: workflow runs, dispatches, artifacts; `git`: refs, trees, commits (the bot's branches);
- `collaborators`: a user's permission.

Callers import from here, never from a module of the package.
"""

from __future__ import annotations

from bot.publish.github_api.actions import ARTIFACT_SLACK, Actions
from bot.publish.github_api.collaborators import Collaborators
from bot.publish.github_api.commits import COMMAND_CONTEXT, STATUS_CONTEXT, STATUS_STATES, Commits
from bot.publish.github_api.errors import ArtifactGone, ArtifactTooLarge, GitHubError, RefMoved, reason
from bot.publish.github_api.git import GitData
from bot.publish.github_api.issues import REACTIONS, Issues
from bot.publish.github_api.pulls import PullRequests
from bot.publish.github_api.records import (
    Artifact,
    Comment,
    CommitStatus,
    Issue,
    Permission,
    PullRequest,
    WorkflowRun,
)
from bot.publish.github_api.retry import RETRIED_STATUSES, RetryPolicy
from bot.publish.github_api.session import DEFAULT_API_URL

__all__ = [
    "ARTIFACT_SLACK",
    "COMMAND_CONTEXT",
    "DEFAULT_API_URL",
    "REACTIONS",
    "RETRIED_STATUSES",
    "STATUS_CONTEXT",
    "STATUS_STATES",
    "Artifact",
    "ArtifactGone",
    "ArtifactTooLarge",
    "Comment",
    "CommitStatus",
    "GitHubClient",
    "GitHubError",
    "Issue",
    "Permission",
    "PullRequest",
    "RefMoved",
    "RetryPolicy",
    "WorkflowRun",
    "reason",
]


class GitHubClient(Issues, PullRequests, Commits, Actions, GitData, Collaborators):
    """One repository on one GitHub API; methods return the plain records of `records`.

    Built as `GitHubClient(repository, token, api_url=…, policy=…)` (`Session`'s arguments).
    """
