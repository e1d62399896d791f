"""What every `export-bot github …` command shares: its context (repository, token, event, settings) and how a job ends."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from bot.cli.common import EXIT_FAILURE, EXIT_USAGE, BotError, handle_errors
from bot.cli.options import stacked

# Options several `github` commands take, each spelled once.
server_url_option = click.option(
    "--server-url", envvar="GITHUB_SERVER_URL", default="https://github.com", help="GITHUB_SERVER_URL."
)
bot_login_option = click.option(
    "--bot-login", envvar="EXPORT_BOT_LOGIN", default="github-actions[bot]", show_default=True
)
conformance_workflow_option = click.option(
    "--workflow", default="export-conformance.yml", show_default=True, help="The conformance workflow's file."
)
skiplists_path_option = click.option(
    "--skiplists-path",
    default=None,
    help="The skiplist folder's path in the repository (default: [tool.export-bot] skiplists, else skiplists).",
)
# Where main's sweeps keep their states and reports: the baseline workflow's artifacts on the default branch.
baseline_artifact_options = stacked(
    click.option("--workflow", default="export-baseline.yml", show_default=True),
    click.option("--artifact", default="export-baseline", show_default=True),
    click.option("--branch", default="main", show_default=True, help="The default branch, whose own sweeps count."),
)


def dispatch_option(help: str):
    """`--dispatch WORKFLOW`: the workflow file the command starts."""
    return click.option("--dispatch", default=None, help=help)


@dataclass(frozen=True)
class Context:
    repository: str | None
    token: str | None
    api_url: str
    event_path: str | None
    config: Path | None

    @functools.cached_property
    def settings(self):
        """Read once per command, whichever of client, caps and options asks first."""
        from bot.settings import load_settings

        return load_settings(self.config)

    def skiplists_path(self, given: str | None) -> str:
        """--skiplists-path, else `[tool.export-bot] skiplists` as a path from the pyproject's folder."""
        from bot.cli.common import skiplists_in_repository
        from bot.settings import Settings

        if given:
            return given
        if "skiplists" not in self.settings.configured:
            return Settings().skiplists.as_posix()
        root = self.config.parent if self.config else Path(".")
        return skiplists_in_repository(self.settings.skiplists, root)

    def caps(self):
        from bot.publish.baseline import Caps

        return Caps.from_settings(self.settings)

    def client(self):
        from bot.jobs.github import make_client

        return make_client(self.repository, self.token, self.api_url, self.settings)

    def event(self) -> dict:
        from bot.publish.events import load_event

        return load_event(self.event_path)


def actions(output: Path | None = None):
    """Where annotations, outputs and the summary go: the runner's files, or `output` for the outputs."""
    from dataclasses import replace

    from bot.publish.actions import Actions

    found = Actions.from_env(sys.stdout)
    return replace(found, output_path=output) if output is not None else found


def finish(outcome, output: Path | None = None) -> None:
    """The job's outcome → outputs (to `output` when given), annotations, log lines and the exit code."""
    runner = actions(output)
    for name, value in outcome.outputs:
        runner.set_output(name, value)
    for level, message in outcome.annotations:
        if message:
            runner.annotate(level, message)
    lines = outcome.lines
    if outcome.exit_code == EXIT_USAGE and lines:
        # A refusal: its last line is the reason, said once as the error (`error: …`, exit 2).
        *lines, reason = lines
    for line in lines:
        click.echo(line, err=outcome.exit_code == EXIT_FAILURE)
    if outcome.exit_code == EXIT_USAGE and outcome.lines:
        raise BotError(reason)
    if outcome.exit_code:
        raise SystemExit(outcome.exit_code)


def github_errors(fn):
    """GitHub refusing (after retries) fails the job with an error annotation and exit 2, like any bad input.

    Exit 1 is kept for a verdict of failure (docs/diff.md): a refusal must not read as cells broken.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from bot.publish.github_api import GitHubError

        try:
            return fn(*args, **kwargs)
        except GitHubError as exc:
            actions().annotate("error", str(exc))
            raise

    return handle_errors(wrapper)
