"""The records the adapter returns: frozen dataclasses, and the converters from PyGithub's objects.

Callers see these and never a PyGithub object; each holds only the fields the bot reads.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    user: str
    created_at: str


@dataclass(frozen=True)
class CommitStatus:
    state: str
    description: str
    target_url: str


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: str
    head_sha: str
    head_ref: str
    head_repo: str | None  # None when the fork was deleted
    base_repo: str
    base_ref: str
    title: str = ""
    body: str = ""
    merged: bool = False
    author: str | None = None  # the login that opened it (None: a deleted account)
    merged_by: str | None = None  # who merged it: only `pull_request` (the single-PR endpoint) says

    @property
    def is_fork(self) -> bool:
        return self.head_repo != self.base_repo


@dataclass(frozen=True)
class Permission:
    """A user's access: `role` is the role's name (`maintain`, `triage`, a custom role), `legacy` GitHub's
    older `permission` field, which folds maintain into write and triage into read."""

    role: str
    legacy: str

    def allows(self, allowed: frozenset[str]) -> bool:
        # A custom role has its own name; its legacy field says which base role it extends.
        return self.role in allowed or self.legacy in allowed


@dataclass(frozen=True)
class WorkflowRun:
    """GitHub's own record of a run: what the trust decisions (bot/publish/trust.py) read, never an artifact."""

    id: int
    head_sha: str
    head_branch: str | None
    created_at: str
    title: str = ""
    event: str = ""
    url: str = ""  # the run's page on GitHub
    conclusion: str | None = None
    head_repo: str | None = None  # full name of the repository the run's commit came from (a fork's for a fork PR)
    path: str = ""  # the workflow file, `.github/workflows/…`: a name can be reused, a path in this repository not
    # GitHub lists the PRs of a run only when their head is in this repository: a fork's run lists none.
    pull_requests: tuple[int, ...] = ()
    status: str | None = None


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    size: int
    expired: bool
    download_url: str


@dataclass(frozen=True)
class Issue:
    """An issue as the tracking issue's job reads it (GitHub lists pull requests among issues too)."""

    number: int
    title: str
    body: str
    state: str
    user: str
    is_pull: bool = False


def _run(run) -> WorkflowRun:
    head = run.head_repository
    return WorkflowRun(
        run.id,
        run.head_sha,
        run.head_branch,
        run.created_at.isoformat(),
        run.display_title or "",
        run.event or "",
        run.html_url or "",
        run.conclusion,
        head.full_name if head is not None else None,
        run.path or "",
        tuple(p.number for p in run.pull_requests or ()),
        run.status,
    )


def _issue(i) -> Issue:
    return Issue(
        i.number, i.title or "", i.body or "", i.state, i.user.login if i.user else "", i.pull_request is not None
    )


def _comment(c) -> Comment:
    return Comment(c.id, c.body or "", c.user.login if c.user else "", c.created_at.isoformat())


def _pull(p) -> PullRequest:
    head_repo = p.head.repo.full_name if p.head.repo else None
    return PullRequest(
        p.number,
        p.state,
        p.head.sha,
        p.head.ref,
        head_repo,
        p.base.repo.full_name,
        p.base.ref,
        p.title or "",
        p.body or "",
        p.merged_at is not None,  # `merged` is not in the list endpoint's answer; `merged_at` is
        p.user.login if p.user is not None else None,
    )
