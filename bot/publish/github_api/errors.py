"""The adapter's errors: what PyGithub, requests and urllib3 raise, turned into one `GitHubError` naming the call.

`_guard` wraps every call of the resource modules; a read it marks `again` is made again when its
answer is cut off. The messages and the hints they end with (re-run the job, wait for the budget's
reset) are the ones docs/github.md describes in "Retries and idempotence" and "The API budget".
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TypeVar

import requests
import urllib3
from github import GithubException

from bot.errors import BotError
from bot.publish.github_api.retry import RETRIED_STATUSES, RetryPolicy

log = logging.getLogger(__package__)
T = TypeVar("T")


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


def _unless_gone(call: Callable[[], object]) -> bool:
    """Make `call`: True when done, False when GitHub answers 404 (the object is gone, or never was)."""
    try:
        call()
    except GithubException as exc:
        if exc.status == 404:
            return False
        raise
    return True
