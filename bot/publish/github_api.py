"""The GitHub adapter: every call the bot makes to GitHub, on PyGithub, with bounded retries and one error type."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import requests
import urllib3
from github import Auth, Github, GithubException, GithubRetry, InputGitTreeElement
from github.GithubException import RateLimitExceededExceedsMaxWait

from bot.errors import BotError

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"
STATUS_CONTEXT = "export-conformance"
# The verdict of docs/diff.md → a commit status state. Statuses have no "neutral"; incomplete
# results must never read as a pass, and "error" is GitHub's word for "the check itself broke".
STATUS_STATES = {"success": "success", "failure": "failure", "neutral": "error"}
REACTIONS = frozenset({"eyes", "rocket", "confused", "+1", "-1"})


class GitHubError(BotError):
    """A GitHub call failed for good (after retries, or refused outright); the message says which call."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class _BoundedRetry(GithubRetry):
    """GithubRetry, but a `Retry-After` longer than `max_rate_limit_wait` fails now instead of sleeping it out."""

    def get_retry_after(self, response):
        seconds = super().get_retry_after(response)
        if seconds is not None and self.max_rate_limit_wait is not None and seconds > self.max_rate_limit_wait:
            raise RateLimitExceededExceedsMaxWait(
                response.status,
                {
                    "message": f"GitHub asks to wait {seconds:.0f}s "
                    f"(Retry-After), more than the {self.max_rate_limit_wait:.0f}s allowed"
                },
                dict(response.headers),
                wait=seconds,
            )
        return seconds


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries for transient failures; tests shrink the waits (see `[tool.export-bot]`)."""

    total: int = 5
    backoff: float = 1.0  # urllib3 backoff_factor: backoff * 2**(n-1) seconds between attempts
    backoff_max: float = 30.0
    secondary_rate_wait: float = 60.0  # when a secondary rate limit comes without Retry-After
    max_rate_limit_wait: float = 120.0  # a longer required wait fails fast instead of hanging the job
    request_interval: float = 0.0
    write_interval: float = 1.0  # GitHub asks integrations to space out content-creating requests
    timeout: int = 30

    def urllib3_retry(self) -> GithubRetry:
        # POST and PATCH are retried as well: every write the bot makes is safe to repeat
        # (edits and statuses are idempotent, git objects are content-addressed, a duplicate
        # sticky comment is removed by `comment.upsert_sticky`, "already exists" is handled).
        methods = frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"})
        return _BoundedRetry(
            total=self.total,
            connect=self.total,
            read=self.total,
            status=self.total,
            backoff_factor=self.backoff,
            backoff_max=self.backoff_max,
            allowed_methods=methods,
            status_forcelist=[429, *range(500, 600)],
            # Give the last response back so PyGithub reports its status and message.
            raise_on_status=False,
            respect_retry_after_header=True,
            secondary_rate_wait=self.secondary_rate_wait,
            max_rate_limit_wait=self.max_rate_limit_wait,
        )


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    user: str
    created_at: str


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: str
    head_sha: str
    head_ref: str
    head_repo: str | None  # None when the fork was deleted
    base_repo: str
    base_ref: str

    @property
    def is_fork(self) -> bool:
        return self.head_repo != self.base_repo


@dataclass(frozen=True)
class WorkflowRun:
    id: int
    head_sha: str
    head_branch: str | None
    created_at: str


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    size: int
    expired: bool
    download_url: str


def _guard(what: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Turn whatever PyGithub, requests or urllib3 raise into a `GitHubError` naming the call."""

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            label = what.format(*args, **kwargs)
            try:
                return fn(self, *args, **kwargs)
            except GitHubError:
                raise
            except GithubException as exc:
                message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
                raise GitHubError(
                    f"GitHub refused to {label}: HTTP {exc.status} {message or ''}".rstrip(), exc.status
                ) from exc
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                raise GitHubError(f"could not reach GitHub to {label}: {exc}") from exc

        return wrapper

    return decorate


class GitHubClient:
    """One repository on one GitHub API; methods return the plain dataclasses above."""

    def __init__(
        self, repository: str, token: str, *, api_url: str = DEFAULT_API_URL, policy: RetryPolicy = RetryPolicy()
    ):
        self.repository = repository
        self._gh = Github(
            base_url=api_url.rstrip("/"),
            auth=Auth.Token(token),
            retry=policy.urllib3_retry(),
            timeout=policy.timeout,
            seconds_between_requests=policy.request_interval,
            seconds_between_writes=policy.write_interval,
            lazy=True,  # objects are fetched when read, so `get_issue(n).create_comment` is one request
            user_agent="export-bot",
        )
        self._repo = self._gh.get_repo(repository)

    def close(self) -> None:
        self._gh.close()

    # --- comments and reactions -------------------------------------------------------------
    @_guard("list the comments of #{0}")
    def list_comments(self, number: int) -> list[Comment]:
        return [_comment(c) for c in self._repo.get_issue(number).get_comments()]

    @_guard("comment on #{0}")
    def create_comment(self, number: int, body: str) -> Comment:
        return _comment(self._repo.get_issue(number).create_comment(body))

    @_guard("edit comment {1}")
    def edit_comment(self, number: int, comment_id: int, body: str) -> None:
        self._repo.get_issue(number).get_comment(comment_id).edit(body)

    @_guard("delete comment {1}")
    def delete_comment(self, number: int, comment_id: int) -> bool:
        """False when it was already gone (a concurrent run deleted it first)."""
        try:
            self._repo.get_issue(number).get_comment(comment_id).delete()
        except GithubException as exc:
            if exc.status == 404:
                return False
            raise
        return True

    @_guard("read comment {0}")
    def issue_comment(self, comment_id: int) -> tuple[int, Comment] | None:
        """The issue (or PR) number comment `comment_id` is on, and the comment; None when it is gone."""
        try:
            # The number is not part of the comment's URL: any issue object reaches it.
            found = self._repo.get_issue(1).get_comment(comment_id)
            number = int(found.issue_url.rstrip("/").rsplit("/", 1)[-1])
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        return number, _comment(found)

    @_guard("react {2!r} to comment {1}")
    def react(self, number: int, comment_id: int, content: str) -> None:
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}")
        self._repo.get_issue(number).get_comment(comment_id).create_reaction(content)

    # --- statuses, permissions, pull requests -----------------------------------------------
    @_guard("set the commit status of {0}")
    def set_status(self, sha: str, verdict: str, description: str, target_url: str | None = None) -> None:
        state = STATUS_STATES[verdict]
        kwargs = {"target_url": target_url} if target_url else {}
        # GitHub rejects descriptions longer than 140 characters.
        self._repo.get_commit(sha).create_status(state, description=description[:140], context=STATUS_CONTEXT, **kwargs)

    @_guard("read the permission of {0}")
    def permission(self, user: str) -> str:
        """`admin`, `maintain`, `write`, `triage`, `read` or `none`."""
        try:
            return self._repo.get_collaborator_permission(user)
        except GithubException as exc:
            if exc.status == 404:  # not a collaborator, or not a user at all
                return "none"
            raise

    @_guard("read pull request #{0}")
    def pull_request(self, number: int) -> PullRequest:
        return _pull(self._repo.get_pull(number))

    @_guard("list the files of pull request #{0}")
    def pull_request_files(self, number: int) -> list[str]:
        return [f.filename for f in self._repo.get_pull(number).get_files()]

    @_guard("find the open pull request from {0}")
    def find_open_pull(self, head_branch: str, base: str) -> PullRequest | None:
        owner = self.repository.split("/")[0]
        for pull in self._repo.get_pulls(state="open", head=f"{owner}:{head_branch}", base=base):
            return _pull(pull)
        return None

    @_guard("find the pull request of commit {0}")
    def pulls_with_head(self, sha: str) -> list[PullRequest]:
        """Open PRs whose head is `sha`: a `workflow_run` event from a fork lists none itself."""
        return [_pull(p) for p in self._repo.get_pulls(state="open") if p.head.sha == sha]

    @_guard("open a pull request from {0}")
    def create_pull(self, head_branch: str, base: str, title: str, body: str) -> PullRequest:
        return _pull(self._repo.create_pull(base=base, head=head_branch, title=title, body=body))

    @_guard("edit pull request #{0}")
    def edit_pull(
        self, number: int, *, title: str | None = None, body: str | None = None, state: str | None = None
    ) -> None:
        changes = {k: v for k, v in (("title", title), ("body", body), ("state", state)) if v is not None}
        self._repo.get_pull(number).edit(**changes)

    # --- workflow runs and artifacts --------------------------------------------------------
    @_guard("list the runs of workflow {0}")
    def workflow_runs(
        self,
        workflow: str,
        *,
        branch: str | None = None,
        head_sha: str | None = None,
        status: str = "success",
        limit: int = 1,
    ) -> list[WorkflowRun]:
        """Newest first, at most `limit`."""
        filters = {k: v for k, v in (("branch", branch), ("head_sha", head_sha), ("status", status)) if v}
        runs = []
        for run in self._repo.get_workflow(workflow).get_runs(**filters):
            runs.append(WorkflowRun(run.id, run.head_sha, run.head_branch, run.created_at.isoformat()))
            if len(runs) >= limit:
                break
        return runs

    @_guard("dispatch workflow {0}")
    def dispatch(self, workflow: str, ref: str, inputs: dict[str, str]) -> None:
        self._repo.get_workflow(workflow).create_dispatch(ref, inputs, throw=True)

    @_guard("list the artifacts of run {0}")
    def artifacts(self, run_id: int) -> list[Artifact]:
        return [
            Artifact(a.id, a.name, a.size_in_bytes, a.expired, a.archive_download_url)
            for a in self._repo.get_workflow_run(run_id).get_artifacts()
        ]

    @_guard("download artifact {0.name}")
    def download(self, artifact: Artifact) -> bytes:
        # PyGithub has no artifact download; its requester follows GitHub's 302 to the blob
        # store (dropping the token for another host) and keeps our retries.
        _, _, chunks = self._gh.requester.getStream(artifact.download_url, chunk_size=1 << 16)
        return b"".join(chunks)

    # --- branches and commits ---------------------------------------------------------------
    def _ref(self, branch: str):
        """The branch's ref, fetched (its `url` then is GitHub's `/git/refs/…` one), or None."""
        ref = self._repo.get_git_ref(f"heads/{branch}")
        try:
            ref.complete()
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        return ref

    @_guard("read branch {0}")
    def branch_sha(self, branch: str) -> str | None:
        ref = self._ref(branch)
        return ref.object.sha if ref else None

    @_guard("read folder {1} at {0}")
    def read_folder(self, sha: str, folder: str) -> dict[str, str]:
        """The text files directly inside `folder` at commit `sha`: name → text."""
        found = {}
        for item in self._repo.get_contents(folder, ref=sha):
            if item.type == "file":
                found[item.name] = self._repo.get_contents(item.path, ref=sha).decoded_content.decode("utf-8")
        return found

    @_guard("commit files onto {0}")
    def commit_files(self, parent_sha: str, files: dict[str, str], message: str) -> str:
        """One commit on top of `parent_sha` changing `files` (path → text); returns its SHA."""
        parent = self._repo.get_git_commit(parent_sha)
        elements = [
            InputGitTreeElement(path, "100644", "blob", sha=self._repo.create_git_blob(text, "utf-8").sha)
            for path, text in sorted(files.items())
        ]
        tree = self._repo.create_git_tree(elements, base_tree=parent.tree)
        return self._repo.create_git_commit(message, tree, [parent]).sha

    @_guard("move branch {0}")
    def set_branch(self, branch: str, sha: str, *, force: bool = False) -> None:
        """Create the branch at `sha`, or move it there (force: also when not a fast-forward)."""
        ref = self._ref(branch)
        if ref is None:
            self._repo.create_git_ref(f"refs/heads/{branch}", sha)
        else:
            # Without force GitHub answers 422 "Update is not a fast forward": someone pushed.
            ref.edit(sha, force=force)

    @_guard("delete branch {0}")
    def delete_branch(self, branch: str) -> None:
        ref = self._ref(branch)
        if ref is not None:
            ref.delete()


def _comment(c) -> Comment:
    return Comment(c.id, c.body or "", c.user.login if c.user else "", c.created_at.isoformat())


def _pull(p) -> PullRequest:
    head_repo = p.head.repo.full_name if p.head.repo else None
    return PullRequest(p.number, p.state, p.head.sha, p.head.ref, head_repo, p.base.repo.full_name, p.base.ref)
