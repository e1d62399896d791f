"""The GitHub adapter: every call the bot makes to GitHub, on PyGithub, with bounded retries and one error type."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import TypeVar
from urllib.parse import quote, urlsplit

import requests
import urllib3
from github import Auth, Github, GithubException, GithubRetry, InputGitTreeElement
from github.GithubException import RateLimitExceededExceedsMaxWait

from bot.errors import BotError

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"
STATUS_CONTEXT = "export-conformance"  # the required check: the gate's verdict only
# A dispatched `/export-check` run that looks at part of the PR (models, failed, probe) reports here.
COMMAND_CONTEXT = "export-conformance/command"
# The verdict of docs/diff.md → a commit status state. Statuses have no "neutral"; incomplete
# results must never read as a pass, and "error" is GitHub's word for "the check itself broke".
# "pending" while a run works; "error" also says a run ended without a verdict (cancelled).
STATUS_STATES = {"success": "success", "failure": "failure", "neutral": "error", "pending": "pending", "error": "error"}
REACTIONS = frozenset({"eyes", "rocket", "confused", "+1", "-1"})


class ArtifactTooLarge(BotError):
    """An artifact over the configured size cap: written by a PR's code, so never read whole."""


class GitHubError(BotError):
    """A GitHub call failed for good (after retries, or refused outright); the message says which call."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class RefMoved(GitHubError):
    """A branch is no longer where this job read it: another writer moved it first, and keeps its update."""


class ArtifactGone(GitHubError):
    """An artifact listed a moment ago expired or was deleted before its download: as if never listed."""


# Set while a write that is not idempotent is in flight: urllib3 must then hand a 5xx or a lost
# answer back instead of repeating the request, so the adapter can look for the effect first.
_ONCE = threading.local()


# The answers that ask to try again: too many requests, and every server error. Retried by the
# policy, and named transient in a failure that outlasted it.
RETRIED_STATUSES = frozenset({429, *range(500, 600)})


class _BoundedRetry(GithubRetry):
    """GithubRetry, but a `Retry-After` longer than `max_rate_limit_wait` fails now instead of sleeping it out.

    While a non-idempotent write is in flight (`_ONCE.active`) no method is retryable: a 5xx, a
    rate limit or a read error comes back to `GitHubClient._write_once`. Connection errors are
    still retried here, since a request that never connected cannot have taken effect.
    """

    def _is_method_retryable(self, method: str) -> bool:
        if getattr(_ONCE, "active", False):
            return False
        return super()._is_method_retryable(method)

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

    @classmethod
    def from_settings(cls, settings) -> RetryPolicy:
        """The policy `[tool.export-bot]` asks for (github-retries, -backoff, -write-interval, …)."""
        return cls(
            total=settings.github_retries,
            backoff=settings.github_backoff,
            write_interval=settings.github_write_interval,
            secondary_rate_wait=settings.github_rate_limit_wait,
            timeout=int(settings.github_timeout),
        )

    def wait(self, attempt: int) -> float:
        """The pause before retry `attempt` (1-based), the same schedule urllib3 follows."""
        return min(self.backoff_max, self.backoff * 2 ** (attempt - 1))

    def urllib3_retry(self) -> GithubRetry:
        # POST and PATCH are retried here when repeating them is harmless: edits and statuses
        # are idempotent, git objects are content-addressed, a reaction that exists is answered
        # 200. The writes that are not (a comment, a dispatch, a PR, a branch) go through
        # `GitHubClient._write_once`, which turns this retrying off and looks before repeating.
        methods = frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"})
        return _BoundedRetry(
            total=self.total,
            connect=self.total,
            read=self.total,
            status=self.total,
            backoff_factor=self.backoff,
            backoff_max=self.backoff_max,
            allowed_methods=methods,
            status_forcelist=sorted(RETRIED_STATUSES),
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


def reason(exc: GithubException) -> str:
    """GitHub's words for a refusal: the message, and the `errors[].message` a 422 explains itself with."""
    data = exc.data if isinstance(exc.data, dict) else {"message": exc.data}
    errors = data.get("errors") if isinstance(data.get("errors"), list) else []
    # An error without a message names the field and GitHub's code for it ("head invalid").
    details = [
        e.get("message") or " ".join(str(e[k]) for k in ("field", "code") if e.get(k))
        if isinstance(e, dict)
        else str(e)
        for e in errors
    ]
    message = str(data.get("message") or "")
    details = [d for d in details if d]
    return f"{message} ({'; '.join(details)})" if details else message


def _already_exists(exc: GithubException) -> bool:
    return exc.status == 422 and "already exists" in reason(exc)


def _status_of(exc: requests.HTTPError) -> int | None:
    """The HTTP status of a failed answer from outside the API (the artifact store's)."""
    return exc.response.status_code if exc.response is not None else None


def _transient(exc: Exception) -> bool:
    """A failure after which the write may or may not have taken effect, or that asks to try again."""
    if isinstance(exc, GithubException):
        if exc.status in RETRIED_STATUSES:
            return True
        return exc.status == 403 and "rate limit" in reason(exc).lower()
    return isinstance(exc, (requests.RequestException, urllib3.exceptions.HTTPError, OSError))


def _timed_out(exc: Exception) -> bool:
    """The request was sent and no answer came in time: it may still take effect."""
    return isinstance(exc, (requests.Timeout, urllib3.exceptions.ReadTimeoutError)) or (
        isinstance(exc, requests.ConnectionError) and "timed out" in str(exc)
    )


def _budget_hint(exc: GithubException) -> str:
    """What to do when the token's hourly budget (its primary rate limit) is spent: wait for its reset."""
    headers = {key.lower(): value for key, value in (exc.headers or {}).items()}
    if exc.status not in (403, 429) or headers.get("x-ratelimit-remaining") != "0":
        return ""
    reset = headers.get("x-ratelimit-reset", "")
    when = datetime.fromtimestamp(int(reset), timezone.utc).strftime("%H:%M UTC") if reset.isdigit() else "its reset"
    return (
        f". The token's hourly request budget is spent (GITHUB_TOKEN: 1,000 an hour per repository, "
        f"shared by every workflow); re-run this job after {when}"
    )


def _again(policy: RetryPolicy, call: Callable[[], T], label: str) -> T:
    """`call`, made again when the connection dropped partway through an answer, up to the policy's bound.

    urllib3 retries a request that got no answer, but the body of an answer is read after it has
    handed the response over: an answer cut off there (a dropped connection mid-download) would
    otherwise end the job. Only calls whose repetition changes nothing are marked to be made again.
    """
    for attempt in range(1, policy.total + 1):
        try:
            return call()
        except (requests.exceptions.ChunkedEncodingError, urllib3.exceptions.ProtocolError) as exc:
            log.warning(
                "GitHub's answer to %s was cut off (%s): asking again (%d/%d)", label, exc, attempt, policy.total
            )
            time.sleep(policy.wait(attempt))
    return call()


def _retry_hint(exc: Exception) -> str:
    """What to do after a failure that outlasted the retries but says nothing about the request itself."""
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        transient = _status_of(exc) in RETRIED_STATUSES
    else:
        transient = _transient(exc)
    return ". GitHub was busy or unreachable for the whole retry schedule: re-run the job" if transient else ""


def _guard(what: str, *, again: bool = False) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Turn whatever PyGithub, requests or urllib3 raise into a `GitHubError` naming the call.

    A call marked `again` (a read, or a write that looks before it acts or makes content-addressed
    objects) is made again when an answer was cut off (`_again`).
    """

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            label = what.format(*args, **kwargs)
            call = functools.partial(fn, self, *args, **kwargs)
            try:
                return _again(self._policy, call, label) if again else call()
            except GitHubError:
                raise
            except GithubException as exc:
                said = f"GitHub refused to {label}: HTTP {exc.status} {reason(exc)}".rstrip()
                raise GitHubError(said + (_budget_hint(exc) or _retry_hint(exc)), exc.status) from exc
            except requests.HTTPError as exc:  # the artifact store's answer: its URL is signed, so not quoted
                status = _status_of(exc)
                raise GitHubError(f"GitHub answered HTTP {status} to {label}{_retry_hint(exc)}", status) from exc
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                raise GitHubError(f"could not reach GitHub to {label}: {exc}{_retry_hint(exc)}") from exc

        return wrapper

    return decorate


class GitHubClient:
    """One repository on one GitHub API; methods return the plain dataclasses above."""

    def __init__(
        self, repository: str, token: str, *, api_url: str = DEFAULT_API_URL, policy: RetryPolicy = RetryPolicy()
    ):
        self.repository = repository
        _check_api_url(api_url)
        self._gh = Github(
            base_url=api_url.rstrip("/"),
            auth=Auth.Token(token),
            retry=policy.urllib3_retry(),
            timeout=policy.timeout,
            seconds_between_requests=policy.request_interval,
            seconds_between_writes=policy.write_interval,
            lazy=True,  # objects are fetched when read, so `get_issue(n).create_comment` is one request
            user_agent="export-bot",
            per_page=100,  # GitHub's largest page: a listing costs a third of the requests of the default 30
        )
        self._repo = self._gh.get_repo(repository)
        self._policy = policy

    def close(self) -> None:
        self._gh.close()

    # --- writes that must not be repeated blindly --------------------------------------------
    def _write_once(self, attempt: Callable[[], T], find: Callable[[], T | None], *, exists_ok: bool = False) -> T:
        """Make a write that is not idempotent, retrying only once `find` has not found its effect.

        A 5xx or a lost answer does not say whether the write happened (a proxy can answer 502
        after GitHub acted), so the write is repeated only when `find` does not see it done.
        With `exists_ok`, GitHub's 422 "already exists" is success when `find` sees what exists
        is what this write meant to make (a retry racing its own earlier attempt, or a re-run).
        """
        tries = 0
        while True:
            _ONCE.active = True
            try:
                return attempt()
            except Exception as exc:  # sorted below: transient, "already exists", or raised as is
                failure = exc
            finally:
                _ONCE.active = False
            if exists_ok and isinstance(failure, GithubException) and _already_exists(failure):
                found = find()
                if found is None:
                    raise failure
                log.info("GitHub says %r: what exists is what this write meant to make", reason(failure))
                return found
            if not _transient(failure) or tries >= self._policy.total:
                raise failure
            tries += 1
            time.sleep(self._pause(failure, tries))
            found = self._find_late(failure, find)
            if found is not None:
                log.warning("a write answered %s had taken effect: not repeated", failure)
                return found
            log.warning("a write answered %s had no effect: trying again (%d/%d)", failure, tries, self._policy.total)

    def _find_late(self, failure: Exception, find: Callable[[], T | None]) -> T | None:
        """`find`, and after a timed-out answer `find` again for up to one more timeout: a request that
        reached GitHub but was slow to answer can take effect after the first look, and writing again
        then would make it twice (two sticky comments)."""
        found = find()
        if found is not None or not _timed_out(failure):
            return found
        deadline = time.monotonic() + self._policy.timeout
        poll = 0
        while found is None and time.monotonic() < deadline:
            poll += 1
            time.sleep(min(self._policy.wait(poll), max(0.0, deadline - time.monotonic())))
            found = find()
        return found

    def _pause(self, failure: Exception, tries: int) -> float:
        seconds = self._policy.wait(tries)
        if isinstance(failure, GithubException) and failure.status in (403, 429):
            after = (failure.headers or {}).get("Retry-After") or (failure.headers or {}).get("retry-after")
            wanted = float(after) if after and str(after).isdigit() else self._policy.secondary_rate_wait
            if wanted > self._policy.max_rate_limit_wait:
                raise failure
            seconds = max(seconds, wanted)
        return seconds

    # --- comments and reactions -------------------------------------------------------------
    @_guard("list the comments of #{0}", again=True)
    def list_comments(self, number: int) -> list[Comment]:
        return [_comment(c) for c in self._repo.get_issue(number).get_comments()]

    @_guard("comment on #{0}")
    def create_comment(self, number: int, body: str) -> Comment:
        """Post a comment. After an answer that hides whether it was posted, the comments are re-listed
        and one with exactly this body counts as posted: callers make their bodies unique (a reply names
        the comment it answers, a sticky comment its run)."""
        issue = self._repo.get_issue(number)

        def find() -> Comment | None:
            return next((c for c in reversed(self.list_comments(number)) if c.body.rstrip() == body.rstrip()), None)

        return self._write_once(lambda: _comment(issue.create_comment(body)), find)

    @_guard("edit comment {1}")
    def edit_comment(self, number: int, comment_id: int, body: str) -> None:
        self._repo.get_issue(number).get_comment(comment_id).edit(body)

    @_guard("delete comment {1}")
    def delete_comment(self, number: int, comment_id: int) -> bool:
        """False when it was already gone (a concurrent run deleted it first)."""
        return _unless_gone(self._repo.get_issue(number).get_comment(comment_id).delete)

    @_guard("read comment {0}", again=True)
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
    def react(self, number: int, comment_id: int, content: str) -> bool:
        """False when the comment is gone (its author deleted it since the event named it)."""
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}")
        done = _unless_gone(lambda: self._repo.get_issue(number).get_comment(comment_id).create_reaction(content))
        if not done:
            log.info("comment %s is gone: no %s reaction", comment_id, content)
        return done

    # --- issues (the tracking issue of main's regressions) -----------------------------------
    @_guard("list the issues {0} opened", again=True)
    def issues_by(self, creator: str, *, state: str = "open", labels: tuple[str, ...] = ()) -> list[Issue]:
        """Issues (never pull requests, which GitHub lists here too) `creator` opened, oldest first."""
        filters = {"labels": list(labels)} if labels else {}
        found = self._repo.get_issues(state=state, creator=creator, sort="created", direction="asc", **filters)
        return [i for i in map(_issue, found) if not i.is_pull]

    @_guard("read issue #{0}", again=True)
    def issue(self, number: int) -> Issue:
        """The issue as it is now (a compare-and-swap's second look before a write)."""
        return _issue(self._repo.get_issue(number))

    @_guard("open an issue")
    def create_issue(self, title: str, body: str, *, creator: str) -> Issue:
        """Open an issue. After an answer that hides whether it was opened, `creator`'s open issues are
        re-listed and one with exactly this title and body counts as opened."""

        def find() -> Issue | None:
            return next(
                (i for i in reversed(self.issues_by(creator)) if (i.title, i.body.rstrip()) == (title, body.rstrip())),
                None,
            )

        return self._write_once(lambda: _issue(self._repo.create_issue(title=title, body=body)), find)

    @_guard("edit issue #{0}")
    def edit_issue(self, number: int, **changes: str) -> None:
        """Set the issue's `body`, `state` or `state_reason`. An edit states the end result: repeating
        it after a lost answer is harmless."""
        self._repo.get_issue(number).edit(**changes)

    @_guard("list the pull requests of commit {0}", again=True)
    def commit_pulls(self, sha: str) -> list[PullRequest]:
        """The pull requests GitHub associates with a commit (the one that merged it, for a commit on main)."""
        try:
            return [_pull(p) for p in self._repo.get_commit(sha).get_pulls()]
        except GithubException as exc:
            if exc.status == 422:  # "No commit found for SHA": a commit GitHub does not know has no PR
                return []
            raise

    @_guard("read commit {0}", again=True)
    def commit_author(self, sha: str) -> str | None:
        """The GitHub account that authored a commit; None when none matches its email, or GitHub lacks the commit."""
        try:
            author = self._repo.get_commit(sha).author
        except GithubException as exc:
            if exc.status in (404, 422):  # "No commit found for SHA"
                return None
            raise
        return author.login if author is not None else None

    # --- statuses, permissions, pull requests -----------------------------------------------
    @_guard("set the commit status of {0}")
    def set_status(
        self, sha: str, verdict: str, description: str, target_url: str | None = None, *, context: str = STATUS_CONTEXT
    ) -> None:
        state = STATUS_STATES[verdict]
        kwargs = {"target_url": target_url} if target_url else {}
        # GitHub rejects descriptions longer than 140 characters.
        self._repo.get_commit(sha).create_status(state, description=description[:140], context=context, **kwargs)

    @_guard("create the check run on {0}")
    def create_check_run(
        self, sha: str, name: str, conclusion: str, outputs: list[dict], details_url: str | None = None
    ) -> int:
        """A completed check run on `sha`; each further output adds its batch of annotations (GitHub appends them)."""
        kwargs = {"details_url": details_url} if details_url else {}
        run = self._repo.create_check_run(
            name, sha, status="completed", conclusion=conclusion, output=outputs[0], **kwargs
        )
        for more in outputs[1:]:
            run.edit(output=more)
        return run.id

    @_guard("read the commit statuses of {0}", again=True)
    def current_status(self, sha: str, *, context: str = STATUS_CONTEXT) -> CommitStatus | None:
        """The latest status of `context` on `sha` (the combined status holds each context's latest)."""
        for status in self._repo.get_commit(sha).get_combined_status().statuses:
            if status.context == context:
                return CommitStatus(status.state, status.description or "", status.target_url or "")
        return None

    @_guard("read the permission of {0}", again=True)
    def permission(self, user: str) -> Permission:
        """The user's role (`admin`, `maintain`, `write`, `triage`, `read`, a custom role, or `none`)."""
        try:
            # One request for both fields (PyGithub's getters would make two).
            _, data = self._gh.requester.requestJsonAndCheck(
                "GET", f"{self._repo.url}/collaborators/{quote(user, safe='')}/permission"
            )
        except GithubException as exc:
            if exc.status == 404:  # not a collaborator, or not a user at all
                return Permission("none", "none")
            raise
        legacy = str(data.get("permission") or "none")
        return Permission(str(data.get("role_name") or legacy), legacy)

    @_guard("read pull request #{0}", again=True)
    def pull_request(self, number: int) -> PullRequest:
        p = self._repo.get_pull(number)
        merger = p.merged_by  # in the single-PR answer only: the list endpoints' `pull-request-simple` lacks it
        return replace(_pull(p), merged_by=merger.login if merger is not None else None)

    @_guard("list the files of pull request #{0}", again=True)
    def pull_request_files(self, number: int) -> list[str]:
        return [f.filename for f in self._repo.get_pull(number).get_files()]

    @_guard("find the pull requests from {0}:{1}", again=True)
    def pulls_from(
        self, owner: str, branch: str, *, state: str = "open", base: str | None = None, limit: int = 30
    ) -> list[PullRequest]:
        """PRs whose head is `owner:branch` (a fork's owner for a fork PR), newest first: one request."""
        found = []
        filters = {"base": base} if base else {}
        pulls = self._repo.get_pulls(state=state, head=f"{owner}:{branch}", sort="created", direction="desc", **filters)
        for pull in pulls:
            found.append(_pull(pull))
            if len(found) >= limit:
                break
        return found

    def find_open_pull(self, head_branch: str, base: str) -> PullRequest | None:
        """The open PR from this repository's `head_branch` into `base`, if any."""
        found = self.pulls_from(self.repository.split("/")[0], head_branch, base=base, limit=1)
        return found[0] if found else None

    @_guard("open a pull request from {0}")
    def create_pull(self, head_branch: str, base: str, title: str, body: str, *, draft: bool = False) -> PullRequest:
        """Open the PR (a draft with `draft`); when one from `head_branch` into `base` is already open (an
        earlier attempt whose answer was lost, or GitHub's 422 "A pull request already exists"), that one is made ours."""
        made = self._write_once(
            lambda: _pull(self._repo.create_pull(base=base, head=head_branch, title=title, body=body, draft=draft)),
            lambda: self.find_open_pull(head_branch, base),
            exists_ok=True,
        )
        if (made.title, made.body) != (title, body):
            self.edit_pull(made.number, title=title, body=body)
            made = replace(made, title=title, body=body)
        return made

    @_guard("label pull request #{0}", again=True)
    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        """Add `labels` to the PR (GitHub creates a label the repository lacks); adding one it has changes nothing."""
        self._repo.get_issue(number).add_to_labels(*labels)

    @_guard("request reviews on pull request #{0}", again=True)
    def request_reviews(self, number: int, reviewers: Sequence[str]) -> None:
        """Ask `reviewers` for a review: a login, or `org/team` for a team (by its slug). Asking again
        someone already asked changes nothing."""
        users = [r for r in reviewers if "/" not in r]
        teams = [r.split("/", 1)[1] for r in reviewers if "/" in r]
        self._repo.get_pull(number).create_review_request(reviewers=users, team_reviewers=teams)

    @_guard("edit pull request #{0}")
    def edit_pull(self, number: int, **changes: str) -> None:
        """Set the PR's `title`, `body` or `state` (PyGithub takes no other name)."""
        self._repo.get_pull(number).edit(**changes)

    # --- workflow runs and artifacts --------------------------------------------------------
    @_guard("list the runs of workflow {0}", again=True)
    def workflow_runs(
        self,
        workflow: str,
        *,
        branch: str | None = None,
        head_sha: str | None = None,
        status: str | None = "success",
        event: str | None = None,
        created: str | None = None,
        limit: int = 1,
    ) -> list[WorkflowRun]:
        """Newest first, at most `limit`; `status` None lists runs whatever their state or conclusion."""
        given = (("branch", branch), ("head_sha", head_sha), ("status", status), ("event", event), ("created", created))
        filters = {k: v for k, v in given if v}
        runs = []
        for run in self._repo.get_workflow(workflow).get_runs(**filters):
            runs.append(_run(run))
            if len(runs) >= limit:
                break
        return runs

    @_guard("read workflow run {0}", again=True)
    def workflow_run(self, run_id: int) -> WorkflowRun:
        return _run(self._repo.get_workflow_run(run_id))

    @_guard("read attempt {1} of workflow run {0}", again=True)
    def run_attempt_state(self, run_id: int, attempt: int) -> tuple[str | None, str | None]:
        """(status, conclusion) of one attempt of a run (`…/runs/<id>/attempts/<n>`): an earlier attempt as
        it ended, the current one as it stands."""
        _, data = self._gh.requester.requestJsonAndCheck(
            "GET", f"{self._repo.url}/actions/runs/{run_id}/attempts/{attempt}"
        )
        data = data if isinstance(data, dict) else {}
        return data.get("status"), data.get("conclusion")

    @_guard("re-run workflow run {0}")
    def rerun(self, run_id: int) -> None:
        """Re-run a completed run (`POST …/runs/<id>/rerun`): the same run id, event, commit and ref, the
        next attempt, with the privileges of the actor who started it ("Re-running workflows and jobs")."""
        self._gh.requester.requestJsonAndCheck("POST", f"{self._repo.url}/actions/runs/{run_id}/rerun")

    @_guard("find the merge base of {0} and {1}", again=True)
    def merge_base(self, base: str, head: str) -> str:
        """The commit `head` branched off `base` (a branch or a SHA): the compare API's `merge_base_commit`."""
        sha = self._repo.compare(base, head).merge_base_commit.sha
        if not (isinstance(sha, str) and len(sha) == 40 and all(c in "0123456789abcdef" for c in sha)):
            raise GitHubError(f"GitHub's comparison of {base}...{head} named no merge base commit")
        return sha

    @_guard("list the branches whose head is {0}", again=True)
    def branches_at(self, sha: str) -> list[str]:
        """This repository's branches whose head commit is `sha` (GitHub's `branches-where-head`)."""
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "GET", f"{self._repo.url}/commits/{quote(sha, safe='')}/branches-where-head"
            )
        except GithubException as exc:
            if exc.status == 422:  # "No commit found for SHA": a commit unknown here heads no branch here
                return []
            raise
        return [str(b.get("name")) for b in data or () if isinstance(b, dict)]

    @_guard("dispatch workflow {0}")
    def dispatch(
        self, workflow: str, ref: str, inputs: dict[str, str], *, started: Callable[[WorkflowRun], bool]
    ) -> WorkflowRun | None:
        """Dispatch `workflow` once; `started` recognises the run a dispatch whose answer was lost started.

        Returns that run when a retry found it, else None. GitHub lists a dispatched run a few
        seconds after accepting the dispatch, so it is looked for over the retry schedule.
        """
        # A minute of slack: the runner's clock and GitHub's need not agree.
        since = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        target = self._repo.get_workflow(workflow)

        def find() -> WorkflowRun | None:
            for poll in range(1, 5):
                for run in self.workflow_runs(
                    workflow, event="workflow_dispatch", created=f">={since}", status=None, limit=30
                ):
                    if started(run):
                        return run
                time.sleep(self._policy.wait(poll))
            return None

        def attempt() -> None:
            target.create_dispatch(ref, inputs, throw=True)

        return self._write_once(attempt, find)

    @_guard("list the artifacts of run {0}", again=True)
    def artifacts(self, run_id: int) -> list[Artifact]:
        return [
            Artifact(a.id, a.name, a.size_in_bytes, a.expired, a.archive_download_url)
            for a in self._repo.get_workflow_run(run_id).get_artifacts()
        ]

    @_guard("list the artifacts named {0}", again=True)
    def artifacts_named(self, name: str, *, runs: int, since: str | None = None) -> tuple[dict[int, Artifact], int]:
        """The repository's artifacts named `name`, newest first, by the run that uploaded them (its newest).

        One listing for every run (GitHub's `?name=` filter), instead of one request per run: each
        `github baseline` reads up to a hundred runs, and `GITHUB_TOKEN` has 1,000 requests an hour
        per repository, shared by every workflow. The listing is read page by page (100 a page,
        GitHub's largest) until it reaches artifacts made before `since` (the oldest run wanted, an
        ISO time: a run's artifacts are made after it starts) or its end; either way it holds every
        artifact of the runs wanted, and the oldest run id returned is 0. Only a listing flooded
        past `_artifact_pages(runs)` pages stops early, returning the oldest run id it reached.
        """
        found: dict[int, Artifact] = {}
        cut = _before(since)
        oldest = 0
        for index, a in enumerate(self._repo.get_artifacts(name=name)):
            if cut is not None and a.created_at is not None and a.created_at < cut:
                return found, 0
            run_id = a.workflow_run.id if a.workflow_run is not None else 0
            oldest = run_id
            if run_id and run_id not in found and not a.expired and a.name == name:
                found[run_id] = Artifact(a.id, a.name, a.size_in_bytes, a.expired, a.archive_download_url)
            if index + 1 >= _artifact_pages(runs) * 100:
                return found, oldest
        return found, 0

    @_guard("download artifact {0.name}", again=True)
    def download(self, artifact: Artifact, *, max_bytes: int | None = None) -> bytes:
        """The artifact's zip; one larger than `max_bytes` is refused before and while it is fetched.

        GitHub's `size_in_bytes` is checked first; the stream is bounded too, since what arrives
        need not be what the listing said.
        """
        if max_bytes is not None and artifact.size > max_bytes:
            raise ArtifactTooLarge(
                f"artifact {artifact.name} is {artifact.size} bytes, over the {max_bytes}-byte cap "
                "(artifact-max-mb in [tool.export-bot]): not downloaded"
            )
        # PyGithub has no artifact download; its requester follows GitHub's 302 to the blob
        # store (dropping the token for another host) and keeps our retries.
        try:
            _, _, chunks = self._gh.requester.getStream(artifact.download_url, chunk_size=1 << 16)
        except requests.HTTPError as exc:
            status = _status_of(exc)
            if status in (404, 410):  # GitHub's words for an artifact expired or deleted since the listing
                raise ArtifactGone(
                    f"artifact {artifact.name} expired or was deleted after it was listed", status
                ) from exc
            raise
        data, total = [], 0
        for chunk in chunks:
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise ArtifactTooLarge(
                    f"artifact {artifact.name} sent more than the {max_bytes}-byte cap "
                    "(artifact-max-mb in [tool.export-bot]): download stopped"
                )
            data.append(chunk)
        return b"".join(data)

    # --- branches and commits ---------------------------------------------------------------
    def _ref(self, branch: str):
        """The branch's ref, fetched (its `url` then is GitHub's `/git/refs/…` one), or None."""
        ref = self._repo.get_git_ref(f"heads/{branch}")
        return ref if _unless_gone(ref.complete) else None

    @_guard("read branch {0}", again=True)
    def branch_sha(self, branch: str) -> str | None:
        ref = self._ref(branch)
        return ref.object.sha if ref else None

    @_guard("read folder {1} at {0}", again=True)
    def read_folder(self, sha: str, folder: str) -> dict[str, str]:
        """The text files directly inside `folder` at commit `sha`: name → text."""
        found = {}
        for item in self._repo.get_contents(folder, ref=sha):
            if item.type == "file":
                found[item.name] = self._repo.get_contents(item.path, ref=sha).decoded_content.decode("utf-8")
        return found

    @_guard("commit files onto {0}", again=True)
    def commit_files(self, parent_sha: str, files: dict[str, str], message: str) -> str:
        """One commit on top of `parent_sha` changing `files` (path → text); returns its SHA."""
        parent = self._repo.get_git_commit(parent_sha)
        elements = [
            InputGitTreeElement(path, "100644", "blob", sha=self._repo.create_git_blob(text, "utf-8").sha)
            for path, text in sorted(files.items())
        ]
        tree = self._repo.create_git_tree(elements, base_tree=parent.tree)
        return self._repo.create_git_commit(message, tree, [parent]).sha

    @_guard("read commit {0}", again=True)
    def commit_message(self, sha: str) -> str:
        """The message of commit `sha` (what a branch's writer said of its update)."""
        return self._repo.get_git_commit(sha).message or ""

    @_guard("move branch {0}", again=True)
    def set_branch(self, branch: str, sha: str, *, force: bool = False) -> None:
        """Create the branch at `sha`, or move it there (force: also when not a fast-forward)."""
        ref = self._ref(branch)
        if ref is not None:
            # Without force GitHub answers 422 "Update is not a fast forward": someone pushed.
            ref.edit(sha, force=force)
            return

        def find() -> bool | None:
            # After a lost answer or "Reference already exists": done when the branch is at `sha`.
            current = self._ref(branch)
            if current is None:
                return None
            if current.object.sha != sha:
                if not force:
                    raise GitHubError(
                        f"branch {branch} already exists at {current.object.sha[:12]}, not at {sha[:12]}: "
                        "someone else created it; nothing was changed"
                    )
                current.edit(sha, force=True)
            return True

        self._write_once(lambda: self._repo.create_git_ref(f"refs/heads/{branch}", sha), find, exists_ok=True)

    @_guard("move branch {0}")
    def swap_branch(self, branch: str, expected: str | None, sha: str | None, *, force: bool = False) -> None:
        """Move `branch` from `expected` to `sha` (None: absent, so create it, or delete it), compare-and-swap.

        The branch is read again just before the write: when it is no longer at `expected`, another
        writer moved it since this job read it, and `RefMoved` is raised with nothing changed. A
        creation is GitHub's own check (a ref that exists is refused), and so is a move without
        `force` (GitHub moves the ref only onto a descendant of where it is then). A `force` move
        can only be checked by the read before it: a writer acting within that one request's time
        is overwritten (docs/github.md, "Main's state").
        """
        ref = self._ref(branch)
        current = ref.object.sha if ref is not None else None
        if current != expected:
            raise RefMoved(
                f"branch {branch} moved to {(current or 'nothing')[:12]} since this job read it at "
                f"{(expected or 'nothing')[:12]}: another job updated it; this one changed nothing"
            )
        if sha is None:
            if ref is not None:
                self.delete_branch(branch)
            return
        if ref is None:
            self._create_ref(branch, sha)
            return
        try:
            ref.edit(sha, force=force)
        except GithubException as exc:
            if exc.status == 422 and "fast forward" in reason(exc):
                raise RefMoved(f"branch {branch} moved while this job wrote it: this one changed nothing") from exc
            raise

    def _create_ref(self, branch: str, sha: str) -> None:
        """Create `branch` at `sha`; one that exists elsewhere is another writer's (`RefMoved`)."""

        def find() -> bool | None:
            current = self._ref(branch)
            if current is None:
                return None
            if current.object.sha != sha:
                raise RefMoved(
                    f"branch {branch} was created at {current.object.sha[:12]} by another job "
                    "while this one ran: this one changed nothing"
                )
            return True

        self._write_once(lambda: self._repo.create_git_ref(f"refs/heads/{branch}", sha), find, exists_ok=True)

    @_guard("delete branch {0}")
    def delete_branch(self, branch: str) -> None:
        ref = self._ref(branch)
        if ref is None:
            return
        try:
            ref.delete()
        except GithubException as exc:
            # A retried DELETE whose first answer was lost meets 422: done if the branch is gone.
            if exc.status != 422 or self._ref(branch) is not None:
                raise


# A day of slack under the oldest run wanted: the runner's clock, and the artifact store's, need not agree.
ARTIFACT_SLACK = timedelta(days=1)


def _before(since: str | None) -> datetime | None:
    """Where a name-filtered listing may stop: a day before `since` (an ISO time), None to read it all."""
    if not since:
        return None
    moment = datetime.fromisoformat(since.replace("Z", "+00:00"))
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)) - ARTIFACT_SLACK


def _artifact_pages(runs: int) -> int:
    """The most pages a name-filtered listing reads: a page per 100 runs wanted, and room for a busy
    repository's other runs of the same name (a fork's runs can upload any name) before it gives up."""
    return -(-max(runs, 1) // 100) + 9


def _unless_gone(call: Callable[[], object]) -> bool:
    """Make `call`: True when done, False when GitHub answers 404 (the object is gone, or never was)."""
    try:
        call()
    except GithubException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def _check_api_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok:
        raise BotError(f"--api-url {url!r} is not an http(s) URL; pass GitHub's API URL (GITHUB_API_URL)")


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
