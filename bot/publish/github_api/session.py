"""The session every resource module shares: PyGithub's `Github` for one repository, its auth and retries.

Also the one path for a write that is not idempotent (`_write_once`): it is made again only when
GitHub shows no effect of the earlier attempt (docs/github.md, "Retries and idempotence").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

from github import Auth, Github, GithubException

from bot.errors import BotError
from bot.publish.github_api.errors import _already_exists, _timed_out, _transient, reason
from bot.publish.github_api.retry import _ONCE, RetryPolicy

log = logging.getLogger(__package__)
T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"


class Session:
    """One repository on one GitHub API: the PyGithub handle, the retry policy, and the write-once loop."""

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


def _check_api_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        ok = False
    if not ok:
        raise BotError(f"--api-url {url!r} is not an http(s) URL; pass GitHub's API URL (GITHUB_API_URL)")
