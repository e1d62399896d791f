"""`export-bot run`: select cells, run them under pytest (one item per cell), write JUnit."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import EXIT_OK, handle_errors, resolve_skiplists, verify_tested_transformers
from bot.cli.options import FILE, selection_file_option
from bot.cli.run_options import durations_option, models_options, run_options


@click.command()
@models_options("; added to --preset", ": smoke, core, all (default: smoke when no --models)")
@selection_file_option(
    "The cells of `export-bot select --json FILE` instead of --models/--preset "
    "(--backends, --shapes and --no-generate narrow them)."
)
@click.option(
    "--rerun-of",
    type=FILE,
    default=None,
    help="A report.json: run its newly broken cells that still need their confirming re-run.",
)
@click.option(
    "--cells",
    "cell_ids",
    multiple=True,
    metavar="ID[,ID]",
    help="Exactly these cells, by id (`ModelClass::test_name`, docs/cells.md; repeat or comma-separate), "
    "instead of --models/--preset: how a failure group's repro names its cell.",
)
@click.option("--shard", default=None, metavar="I/N", help="Run only shard I of N (balanced, deterministic).")
@durations_option("balance --shard and order the cells")
@click.option(
    "--junit",
    type=FILE,
    default=Path("export-junit.xml"),
    show_default=True,
    help="Where to write the JUnit XML.",
)
@run_options(workers="auto")
@click.option(
    "--footprints",
    is_flag=True,
    help="Record each cell's footprint, the checkout's functions it executed, as the testcase property "
    "`footprint` (main's sweeps keep them in baseline.json for selection; docs/selection.md).",
)
@handle_errors
def run(selection, rerun_of, cell_ids, junit, workers, skiplists_dir, checkout, durations, **options) -> None:
    """Run the conformance cells and write JUnit; exits 0 when every cell ran (failures are data)."""
    from bot.jobs.inputs import stage_settings
    from bot.jobs.run import NamedCells, plan_from_options, refuse_when_nothing_built, run_plan

    settings = stage_settings(selection)
    # Before planning: reading a tester source imports transformers, which must be the checkout's.
    verify_tested_transformers(checkout, options["source"] or settings.source)
    plan = plan_from_options(
        settings=settings,
        skiplists=resolve_skiplists(skiplists_dir, settings),
        named=NamedCells(tuple(cell_ids), selection, rerun_of),
        durations_file=durations,
        **options,
    )
    shard = f", shard {plan.shard}" if plan.shard else ""
    click.echo(f"export-bot run: {len(plan.cells)} cells from {plan.source}{shard} → {junit}", err=True)
    run_plan(plan, junit, workers)
    if plan.cells:
        refuse_when_nothing_built(junit)
    raise SystemExit(EXIT_OK)
