"""`export-bot github …`: the entry points the workflows call; the PR-facing commands here, main's health in github_main.py."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli import github_main
from bot.cli.github_common import (
    Context,
    actions,
    bot_login_option,
    conformance_workflow_option,
    dispatch_option,
    finish,
    github_errors,
    server_url_option,
    skiplists_path_option,
)
from bot.cli.options import FILE, check_dashboard_url, config_option, github_output_option, report_option, run_id_option


@click.group()
# Not `required=True`: click checks group options before a subcommand's --help, so
# `export-bot github comment --help` would fail outside Actions. `client()` asks for them.
@click.option("--repo", envvar="GITHUB_REPOSITORY", default=None, help="owner/name (GITHUB_REPOSITORY).")
@click.option("--token", envvar="GITHUB_TOKEN", default=None, show_envvar=True, help="API token (GITHUB_TOKEN).")
@click.option("--api-url", envvar="GITHUB_API_URL", default="https://api.github.com", help="GITHUB_API_URL.")
@click.option(
    "--event", "event_path", envvar="GITHUB_EVENT_PATH", default=None, help="Event payload (GITHUB_EVENT_PATH)."
)
@config_option(default="./pyproject.toml")
@click.pass_context
def github(
    ctx: click.Context, repo: str | None, token: str | None, api_url: str, event_path: str | None, config: Path | None
) -> None:
    """Entry points of the workflows: comment, pending, command, apply, verify-sha, merge-base, baseline, reports, obsolete-skips, track."""
    ctx.obj = Context(repo, token, api_url, event_path, config)


@github.command()
@report_option("The report.json `export-bot report` wrote.", required=True)
@click.option("--pr", type=int, default=None, help="PR number (default: from the workflow_run event).")
@run_id_option("Orders reports when the event names no run: a direct pull_request run (GITHUB_RUN_ID).")
@bot_login_option
@conformance_workflow_option
@server_url_option
@click.option(
    "--dashboard-url",
    default="",
    callback=lambda ctx, param, value: check_dashboard_url(value),
    help="The dashboard's address (https://…): each cell the comment names links to its history there.",
)
@click.pass_obj
@github_errors
def comment(
    obj: Context,
    report_path: Path,
    pr: int | None,
    run_id: int,
    bot_login: str,
    workflow: str,
    server_url: str,
    dashboard_url: str | None,
) -> None:
    """Post or update the sticky comment and the export-conformance status from report.json."""
    from bot.diff.errors import ReportError
    from bot.diff.model import load_report
    from bot.jobs.github_pr import comment_job, missing_report_job
    from bot.publish.events import RunEvent
    from bot.report import render_summary

    event = RunEvent.from_payload(obj.event()) if obj.event_path else RunEvent(None, (), None)
    try:
        report = load_report(report_path)
    except ReportError as exc:
        finish(missing_report_job(obj.client, event, str(exc)))
        return
    # Links point only into this repository, named by the workflow's environment: the report's own
    # repository_url was written by the PR's code.
    repository_url = f"{server_url.rstrip('/')}/{obj.repository}" if obj.repository else None
    # The summary first: it must be there even when GitHub refuses what follows.
    actions().write_summary(render_summary(report, repository_url=repository_url))
    job = comment_job(
        obj.client(),
        event,
        report,
        pr=pr,
        fallback_run_id=run_id,
        bot_login=bot_login,
        workflow=workflow,
        repository_url=repository_url,
        dashboard_url=dashboard_url,
    )
    finish(job)


@github.command()
@click.pass_obj
@github_errors
def pending(obj: Context) -> None:
    """On a conformance run's `workflow_run` event: `pending` when it starts, cleared if it is cancelled."""
    from bot.publish.pending import ConformanceRun, update

    click.echo(update(obj.client(), ConformanceRun.from_payload(obj.event())))


@github.command()
@dispatch_option("Workflow file to dispatch with the request.")
@click.option(
    "--reports",
    default=None,
    help="Workflow whose report artifacts hold the proposals (a fork's apply gets the patch; default: --dispatch).",
)
@click.option("--out", type=FILE, default=None, help="Write the request JSON here.")
@click.pass_obj
@github_errors
def command(obj: Context, dispatch: str | None, reports: str | None, out: Path | None) -> None:
    """Answer an `/export-check` comment (issue_comment event): check, acknowledge, pin the head, dispatch."""
    from bot.jobs.github_command import command_job
    from bot.publish.events import CommentEvent

    outcome = command_job(
        obj.client,
        CommentEvent.from_payload(obj.event()),
        index=lambda: _command_index(obj.config),
        dispatch=dispatch,
        reports=reports,
        caps=obj.caps(),
    )
    request = dict(outcome.outputs).get("request")
    if out and request:
        from bot.files import write_text

        write_text(out, request + "\n")
    finish(outcome)


def _command_index(config: Path | None):
    """The model classes and types a command may name: the checkout's, read as text, else the installed ones.

    The command job installs the light part only, so no transformers: the default branch it
    checks out (the folder of its pyproject, where `--config` points, or the working folder)
    is where the names come from. Outside a checkout, the installed Transformers'.
    """
    from bot.models.index import build_index, installed_index
    from bot.select.tree import MODELS_DIR

    models = (config.parent if config else Path.cwd()) / MODELS_DIR
    return build_index(models) if models.is_dir() else installed_index()


@github.command()
@conformance_workflow_option
@dispatch_option("Workflow to dispatch on the new commit.")
@skiplists_path_option
@click.pass_obj
@github_errors
def apply(obj: Context, workflow: str, dispatch: str | None, skiplists_path: str | None) -> None:
    """`/export-check apply`: commit the PR's latest proposed skiplist patch to its branch (same repository only)."""
    from bot.jobs.github_command import apply_job
    from bot.publish.events import CommentEvent

    event = CommentEvent.from_payload(obj.event())
    finish(
        apply_job(
            obj.client(),
            event,
            workflow=workflow,
            dispatch=dispatch,
            skiplists_path=obj.skiplists_path(skiplists_path),
            caps=obj.caps(),
        )
    )


@github.command("verify-sha")
@click.option("--pr", type=int, required=True)
@click.option("--sha", required=True, help="Head SHA pinned when the command was accepted.")
@click.option(
    "--same-repository",
    is_flag=True,
    help="Stop too when the PR's head is in a fork: a dispatched run must not run a fork's code (docs/github.md).",
)
@click.pass_obj
@github_errors
def verify_sha(obj: Context, pr: int, sha: str, same_repository: bool) -> None:
    """Stop (exit 1) when the PR head moved away from the pinned SHA, or (--same-repository) is a fork's."""
    from bot.jobs.github_command import verify_sha_job

    finish(verify_sha_job(obj.client(), pr, sha, same_repository=same_repository))


@github.command("merge-base")
@click.option(
    "--base",
    required=True,
    callback=lambda ctx, param, value: _checked_ref(value, "--base", sha=False),
    help="The PR's base branch or a commit SHA.",
)
@click.option(
    "--head",
    required=True,
    callback=lambda ctx, param, value: _checked_ref(value, "--head", sha=True),
    help="The PR's head commit SHA.",
)
@github_output_option("Append `sha=` here (default: $GITHUB_OUTPUT, when set).")
@click.pass_obj
@github_errors
def merge_base(obj: Context, base: str, head: str, github_output: Path | None) -> None:
    """Print the merge base of HEAD with BASE (GitHub's compare API), for `export-bot report --merge-base`."""
    from bot.jobs.github_command import merge_base_job

    finish(merge_base_job(obj.client(), base, head), github_output)


def _checked_ref(value: str, flag: str, *, sha: bool) -> str:
    """A commit SHA (7 to 40 hexadecimal digits) or, unless `sha`, a branch name git accepts; else a usage error."""
    value = value.strip()
    if 7 <= len(value) <= 40 and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-")
    if sha or not value or len(value) > 255 or set(value) - allowed or ".." in value or value.startswith(("-", "/")):
        what = "a commit SHA (7 to 40 hexadecimal digits)" if sha else "a branch name or a commit SHA"
        raise click.BadParameter(f"{value[:60]!r} is not {what}", param_hint=flag)
    return value


# Main's health: baseline, reports, obsolete-skips, track.
for _command in (
    github_main.baseline,
    github_main.reports,
    github_main.obsolete_skips,
    github_main.track,
    github_main.sweep,
):
    github.add_command(_command)
