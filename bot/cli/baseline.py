"""`export-bot baseline merge|show|due`: main's per-commit baseline state (docs/baseline.md).

One concept, four stages, four `baseline.py`: results (the state and how it is read), publish (its
artifacts on GitHub), jobs (the merge, show and due jobs) and cli (their options). This is the command line's.
"""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import handle_errors, resolve_skiplists
from bot.cli.options import (
    FILE,
    github_output_option,
    junit_paths_option,
    run_id_option,
    skiplists_option,
    state_option,
)

_now_option = click.option("--now", "when", default=None, help="The time to judge at, ISO 8601 (default: now).")


def _commas(ctx, param, values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _echo(lines: list[str]) -> None:
    for line in lines:
        click.echo(line)


@click.group()
def baseline() -> None:
    """Fold runs on main into the baseline state, show it, and say whether a full sweep is due."""


@baseline.command()
@state_option(
    "A state to fold in: baseline.json, measurement.json, "
    "a folder of them, or a version-1 folder of JUnit XML (repeat; none: start anew).",
    multiple=True,
)
@junit_paths_option("--junit", "junit", "This run's JUnit.")
@junit_paths_option("--rerun", "rerun", "This run's confirming re-run: a cell it disagrees with is marked flipped.")
@click.option("--commit", default=None, help="The main commit the run measured (40 hex digits).")
@click.option("--parent", default=None, help="The commit the push was pushed onto (the push event's `before`).")
@click.option(
    "--commits", multiple=True, callback=_commas, help="The push's commits, oldest first, ending with --commit."
)
@click.option("--source", type=click.Choice(["push", "sweep", "bisect"]), default="push", show_default=True)
@run_id_option()
@click.option("--time", default=None, help="When the run started, ISO 8601 (default: now).")
@click.option("--full", is_flag=True, help="The run was a full sweep.")
@click.option("--due", multiple=True, help="Why a full sweep is due since this push (repeat).")
@click.option("--out", required=True, type=FILE, help="Where to write the folded state (baseline.json).")
@click.option(
    "--measurement", "measurement_out", default=None, type=FILE, help="Also write this run's measurement alone."
)
@handle_errors
def merge(states, junit, rerun, commit, parent, commits, source, run_id, time, full, due, out, measurement_out) -> None:
    """Fold the states with this run's results (the measurement) into one state; written whole or not at all."""
    from bot.jobs.baseline import MeasuredRun, merge_job
    from bot.settings import load_settings

    run = MeasuredRun(commit, parent, commits, source, run_id, time, full, tuple(due))
    _echo(merge_job(states, junit, rerun, run, out=out, measurement_out=measurement_out, settings=load_settings()))


@baseline.command()
@state_option("baseline.json, or a folder holding it.")
@_now_option
@skiplists_option()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@handle_errors
def show(state: Path, when: str | None, skiplists_dir: Path | None, as_json: bool) -> None:
    """Chain length, cells, old cells, flaky cells, regressions on main, and whether a full sweep is due."""
    from bot.jobs.baseline import now, show_job
    from bot.settings import load_settings

    settings = load_settings()
    skiplists = resolve_skiplists(skiplists_dir, settings)
    _echo(show_job(state, skiplists, settings, when=when or now(), as_json=as_json))


@baseline.command()
@state_option("baseline.json, or a folder holding it (empty: none yet).")
@_now_option
@github_output_option("Append `sweep=true|false` here ($GITHUB_OUTPUT).")
@handle_errors
def due(state: Path, when: str | None, github_output: Path | None) -> None:
    """Print why a full sweep is due (`sweep=true|false` in the step outputs); exit 0 either way."""
    from bot.jobs.baseline import due_job, now
    from bot.settings import load_settings

    _echo(due_job(state, load_settings(), when=when or now(), github_output=github_output))
