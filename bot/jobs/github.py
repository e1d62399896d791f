"""What the GitHub jobs share: the client a job talks through, and the `JobOutcome` it returns for the CLI to map.

The jobs themselves: bot/jobs/github_pr.py (a finished run's comment and status), bot/jobs/github_command.py
(`/export-check`) and bot/jobs/github_main.py (the default branch's sweep: baseline, earlier reports, obsolete skips, tracking).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.errors import EXIT_OK, BotError
from bot.publish.github_api import GitHubClient, RetryPolicy


@dataclass(frozen=True)
class JobOutcome:
    """What a job did: lines for the log, step outputs, annotations, and the exit code (docs/diff.md:
    1 is kept for a failed verdict, 2 for a refusal or bad input)."""

    lines: tuple[str, ...] = ()
    exit_code: int = EXIT_OK
    outputs: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()  # (level, message)


def make_client(repository: str | None, token: str | None, api_url: str, settings) -> GitHubClient:
    """The client for `repository`, with the retry policy the settings ask for."""
    if not repository or not token:
        raise BotError("no repository or token: set GITHUB_REPOSITORY and GITHUB_TOKEN (or pass --repo and --token)")
    return GitHubClient(repository, token, api_url=api_url, policy=RetryPolicy.from_settings(settings))
