"""`export-bot github baseline|reports|obsolete-skips|track|sweep`: main's health, as export-baseline.yml calls it (docs/baseline.md)."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import repository_skiplists
from bot.cli.github_common import (
    Context,
    baseline_artifact_options,
    bot_login_option,
    dispatch_option,
    finish,
    github_errors,
    server_url_option,
    skiplists_path_option,
)
from bot.cli.options import FOLDER, min_passes_option, report_option, run_id_option, skiplists_option, state_option


@click.command()
@baseline_artifact_options
@click.option("--out", type=FOLDER, default=Path("base"), show_default=True)
@click.option(
    "--scan", type=click.IntRange(min=1, max=1000), default=60, show_default=True, help="Runs looked at, newest first."
)
@click.pass_obj
@github_errors
def baseline(obj: Context, workflow: str, artifact: str, branch: str, out: Path, scan: int) -> None:
    """Main's baseline state (docs/baseline.md) into OUT/baseline.json: this repository's newest state artifacts
    on BRANCH folded with the measurements not yet in them; a version-1 (JUnit) artifact is converted."""
    from bot.jobs.github_main import baseline_job

    keep = obj.settings.baseline_history
    finish(baseline_job(obj.client(), workflow, artifact, branch, out, obj.caps(), keep=keep, scan=scan))


@click.command()
@baseline_artifact_options
@click.option("--count", type=click.IntRange(min=1), default=29, show_default=True, help="Earlier sweeps to fetch.")
@run_id_option("This run, left out (default: GITHUB_RUN_ID).")
@click.option("--out", type=FOLDER, default=Path("history"), show_default=True)
@click.pass_obj
@github_errors
def reports(obj: Context, workflow: str, artifact: str, branch: str, count: int, run_id: int, out: Path) -> None:
    """The report.json of the last COUNT sweeps (runs that uploaded the artifact) before this one: the dashboard's history (`export-bot site`)."""
    from bot.jobs.github_main import reports_job

    finish(
        reports_job(
            obj.client(), workflow, artifact, branch=branch, count=count, run_id=run_id, out=out, caps=obj.caps()
        )
    )


def _names(ctx, param, value: str) -> tuple[str, ...]:
    """A comma-separated list (a workflow input passed as one value), blanks dropped."""
    return tuple(name.strip() for name in value.split(",") if name.strip())


@click.command("obsolete-skips")
@baseline_artifact_options
@report_option("This sweep's report.json (default: the artifact of this run, GITHUB_RUN_ID).")
@run_id_option()
@min_passes_option
@skiplists_option("The checkout's skiplist folder the proposal starts from (default: [tool.export-bot] skiplists).")
@skiplists_path_option
@click.option(
    "--run-url", default=None, help="This sweep's run page (default: built from --run-id, else the report's)."
)
@server_url_option
@dispatch_option(
    "The conformance workflow to start for the PR's new head (its pushes start none: they use the workflow token)."
)
@click.option(
    "--labels", default="", callback=_names, help="Comma-separated labels a new PR gets (GitHub makes missing ones)."
)
@click.option(
    "--reviewers",
    default="",
    callback=_names,
    help="Comma-separated logins (or org/team) a new PR asks for a review; they must be able to review.",
)
@click.option("--draft", type=click.BOOL, default=False, show_default=True, help="Open a new PR as a draft.")
@click.pass_obj
@github_errors
def obsolete_skips(
    obj: Context,
    workflow: str,
    artifact: str,
    branch: str,
    report_path: Path | None,
    run_id: int,
    min_passes: int | None,
    skiplists_dir: Path | None,
    skiplists_path: str | None,
    run_url: str | None,
    server_url: str,
    dispatch: str | None,
    labels: tuple[str, ...],
    reviewers: tuple[str, ...],
    draft: bool,
) -> None:
    """Propose with the probe history, then open, update or close the one obsolete-skip PR."""
    from bot.jobs.github_main import ObsoleteInputs, obsolete_skips_job
    from bot.publish.obsolete_skips import PullOptions

    settings = obj.settings
    given = ObsoleteInputs(
        workflow,
        artifact,
        report_path,
        run_id,
        min_passes or settings.min_passes,
        branch,
        repository_skiplists(skiplists_dir, settings),
        obj.skiplists_path(skiplists_path),
        run_url,
        server_url,
        dispatch,
        PullOptions(labels, reviewers, draft),
    )
    finish(obsolete_skips_job(obj.client(), given, obj.caps()))


@click.command()
@state_option("Main's baseline.json (`export-bot github baseline`, `baseline merge`).", folder=False)
@skiplists_option(
    "The default branch's skiplist folder: a skiplisted cell is no regression (default: [tool.export-bot] skiplists)."
)
@report_option("This run's report.json: its failure groups (culprit lines, hints) describe the cells they hold.")
@bot_login_option
@server_url_option
@click.pass_obj
@github_errors
def track(
    obj: Context, state: Path, skiplists_dir: Path | None, report_path: Path | None, bot_login: str, server_url: str
) -> None:
    """Open, update in place or close the one tracking issue of main's regressions (docs/github.md)."""
    from bot.jobs.github_main import TrackInputs, track_job

    repository_url = f"{server_url.rstrip('/')}/{obj.repository}" if obj.repository else None
    mentions = obj.settings.mention_culprits
    skiplists = repository_skiplists(skiplists_dir, obj.settings)
    given = TrackInputs(state, skiplists, report_path, bot_login, repository_url, mentions)
    finish(track_job(obj.client(), given))


@click.command()
@state_option("Main's baseline.json as the run has it (absent: no state yet).", folder=False)
@click.option(
    "--due",
    default="",
    help="This push's own reasons, `; `-separated (select's `due=`), not in the state yet; the state's are added.",
)
@click.option("--commit", default=None, help="The push's commit, where its --due reasons are.")
@click.option("--workflow", default="export-baseline.yml", show_default=True, help="The caller workflow to dispatch.")
@click.option("--branch", default="main", show_default=True, help="The default branch, whose head the sweep measures.")
@run_id_option("This run, never counted as a sweep already started (default: GITHUB_RUN_ID).")
@click.pass_obj
@github_errors
def sweep(obj: Context, state: Path, due: str, commit: str | None, workflow: str, branch: str, run_id: int) -> None:
    """Start the due full sweep now (a dispatch with `full: true`), unless a sweep already started covers it."""
    from bot.jobs.github_main import SweepInputs, sweep_job

    reasons = tuple(reason.strip() for reason in due.split("; ") if reason.strip())
    finish(sweep_job(obj.client(), SweepInputs(state, reasons, commit, workflow, branch, run_id)))
