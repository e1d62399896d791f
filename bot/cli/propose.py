"""`export-bot propose`: a report (and probe history) → the skiplist patch; `--apply` writes it."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import EXIT_OK, handle_errors, resolve_skiplists
from bot.cli.options import min_passes_option, recorded_walk_option, report_option, skiplists_option
from bot.cli.run_options import source_option


@click.command()
@report_option("The report.json `export-bot diff` wrote.", required=True)
@click.option(
    "--history",
    "history_paths",
    type=click.Path(path_type=Path),
    multiple=True,
    metavar="FILE",
    help="Earlier probe runs, oldest first (report.json or JUnit; repeat). The report is the newest.",
)
@min_passes_option
@skiplists_option()
@click.option("--apply", "apply_", is_flag=True, help="Write the proposed edits into the skiplist files.")
@click.option("--write-report", is_flag=True, help="Store the proposal in the report's `proposal` slot.")
@source_option
@recorded_walk_option
@handle_errors
def propose(report_path, history_paths, min_passes, skiplists_dir, apply_, write_report, source, recorded_walk) -> None:
    """Propose skiplist edits for a report: entries for new failures, removals of obsolete skips.

    Prints the unified diff on stdout (ready for `git apply`) and what it could not cover on
    stderr. Exit 0 whether or not something is proposed; 2 on bad input.
    """
    from bot.jobs.propose import ProposeInputs, make_proposal
    from bot.settings import load_settings

    settings = load_settings()
    inputs = ProposeInputs(
        report=report_path,
        skiplists=resolve_skiplists(skiplists_dir, settings),
        min_passes=min_passes or settings.min_passes,
        history=tuple(history_paths),
        apply=apply_,
        write_report=write_report,
        source=source or settings.source,
        recorded_walk=tuple(recorded_walk),
    )
    outcome = make_proposal(inputs)
    if outcome.proposal.patch:
        click.echo(outcome.proposal.patch, nl=False)
    for line in outcome.notes():
        click.echo(line, err=True)
    raise SystemExit(EXIT_OK)
