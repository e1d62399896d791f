"""The transport's retry policy: how urllib3, under PyGithub, repeats a request GitHub did not answer.

Every request of the adapter goes through it; docs/github.md ("Retries and idempotence", "The API
budget") says which failures are retried and which writes never are.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from github import GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait

# Set while a write that is not idempotent is in flight: urllib3 must then hand a 5xx or a lost
# answer back instead of repeating the request, so the adapter can look for the effect first.
_ONCE = threading.local()


# The answers that ask to try again: too many requests, and every server error. Retried by the
# policy, and named transient in a failure that outlasted it.
RETRIED_STATUSES = frozenset({429, *range(500, 600)})


class _BoundedRetry(GithubRetry):
    """GithubRetry, but a `Retry-After` longer than `max_rate_limit_wait` fails now instead of sleeping it out.

    While a non-idempotent write is in flight (`_ONCE.active`) no method is retryable: a 5xx, a
    rate limit or a read error comes back to `Session._write_once`. Connection errors are
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
        # `Session._write_once`, which turns this retrying off and looks before repeating.
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
