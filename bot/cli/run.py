"""`export-bot run`: select cells, run them under pytest (one item per cell), write JUnit."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    BotError,
    checkout_option,
    handle_errors,
    matrix_options,
    resolve_skiplists,
    skiplists_option,
    verify_tested_transformers,
    workers_option,
)


@click.command()
@click.option("--models", multiple=True, help="Model classes (repeat or comma-separate); added to --preset.")
@click.option(
    "--preset", default=None, help="A preset of the model source: smoke, core, all (default: smoke when no --models)."
)
@click.option(
    "--selection",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The cells of `export-bot select --json FILE` instead of --models/--preset "
    "(--backends, --shapes and --no-generate narrow them).",
)
@click.option(
    "--rerun-of",
    "rerun_of",
    type=click.Path(dir_okay=False, path_type=Path),
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
@matrix_options
@click.option("--shard", default=None, metavar="I/N", help="Run only shard I of N (balanced, deterministic).")
@click.option(
    "--durations",
    type=click.Path(path_type=Path),
    envvar="EXPORT_BOT_DURATIONS",
    default=None,
    help="An earlier run's JUnit (a file, or a folder of shard files): its testcase times balance --shard and "
    "order the cells (default: EXPORT_BOT_DURATIONS; cells it lacks cost their recorded time).",
)
@workers_option(default="auto")
@click.option(
    "--source", default=None, help="Model source: zoo or transformers-tests:PATH (default: [tool.export-bot] source)."
)
@click.option(
    "--junit",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("export-junit.xml"),
    show_default=True,
    help="Where to write the JUnit XML.",
)
@skiplists_option
@click.option(
    "--cell-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds before a cell is stopped as a timeout (default: [tool.export-bot] cell-timeout, 1000).",
)
@checkout_option
@handle_errors
def run(
    models,
    preset,
    selection,
    rerun_of,
    cell_ids,
    backends,
    shapes,
    generate,
    probe,
    shard,
    durations,
    workers,
    source,
    junit,
    skiplists_dir,
    cell_timeout,
    checkout,
) -> None:
    """Run the conformance cells and write JUnit; exits 0 when every cell ran (failures are data)."""
    from bot.files import make_parent, write_text
    from bot.run.session import COMPLETED, SessionOptions, run_session

    # Before planning: reading a tester source imports transformers, which must be the checkout's.
    verify_tested_transformers(checkout, source)
    plan = plan_from_options(
        models=models,
        preset=preset,
        selection_file=selection,
        rerun_of=rerun_of,
        cell_ids=cell_ids,
        backends=backends,
        shapes=shapes,
        generate=generate,
        probe=probe,
        shard=shard,
        durations_file=durations,
        source=source,
        skiplists_dir=skiplists_dir,
        cell_timeout=cell_timeout,
    )
    click.echo(
        f"export-bot run: {len(plan.cells)} cells from {plan.source}"
        + (f", shard {plan.shard}" if plan.shard else "")
        + f" → {junit}",
        err=True,
    )
    if not plan.cells:
        # An empty shard or a report with nothing to confirm: a valid, empty JUnit, without
        # paying for a pytest session that imports torch and every backend.
        write_text(
            junit,
            '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="export-bot" '
            'tests="0" errors="0" failures="0" skipped="0"/></testsuites>\n',
        )
        raise SystemExit(EXIT_OK)
    make_parent(junit)  # pytest's JUnit and its log go there
    log = junit.with_name(junit.stem + ".pytest.log")  # pytest's own output, e.g. stack dumps of timed-out cells
    code = run_session(plan, SessionOptions(junit=junit, workers=workers, log=log))
    if code not in COMPLETED:
        click.echo(f"error: the run did not complete (pytest exit status {code}); {junit} may be partial", err=True)
        raise SystemExit(EXIT_FAILURE)
    _refuse_when_nothing_built(junit)
    raise SystemExit(EXIT_OK)


def _refuse_when_nothing_built(junit: Path) -> None:
    """Exit 2 when every attempted cell failed to build: a broken setup, not a result to diff."""
    from bot.results import read_results
    from bot.setup_problems import headline, nothing_built, setup_causes

    results = read_results([junit]).results.values()
    if not nothing_built((r.status, r.kind) for r in results):
        return
    causes = setup_causes((dict(r.properties), r.message) for r in results)
    why = headline(causes) if causes else "every cell is a build error or not buildable (see its message in the JUnit)"
    raise BotError(f"{junit}: nothing could be built; {why}. Fix the checkout's test setup, then run again")


def plan_from_options(*, selection_file=None, rerun_of=None, cell_ids=(), skiplists_dir=None, **options):
    """The CLI's edge of planning: read the settings once, the named cells, and resolve the skiplists."""
    from bot.run.planning import build_plan
    from bot.settings import load_settings

    exact = _parse_cell_ids(cell_ids, selection_file, rerun_of, options) if cell_ids else None
    settings = load_settings()
    named = exact
    if named is None and (selection_file or rerun_of):
        named = _named_cells(selection_file, rerun_of)
    plan = build_plan(named=named, skiplists=resolve_skiplists(skiplists_dir, settings), settings=settings, **options)
    if exact is not None and not options.get("shard"):
        # --cells runs what it names: a cell the other options leave out is a contradiction, not an empty run.
        kept = set(plan.cells)
        dropped = [cell.id for cell in exact if cell not in kept]
        if dropped:
            raise BotError(
                f"--cells {dropped[0]}: left out by --backends, --shapes, --no-generate or [tool.export-bot] "
                "backends; --cells already names exactly the cells to run"
            )
    return plan


def _parse_cell_ids(cell_ids, selection_file, rerun_of, options) -> list:
    """The cells `--cells` names, in the order given, each id checked by the cell grammar (docs/cells.md)."""
    from bot.cells import Cell, CellIdError
    from bot.run.selection import split_names

    if selection_file or rerun_of:
        raise BotError("--cells, --selection and --rerun-of each name the cells to run; give only one")
    if options.get("models") or options.get("preset"):
        raise BotError("--cells names the cells to run; leave out --models and --preset")
    cells = []
    for cell_id in split_names(cell_ids):
        try:
            cells.append(Cell.parse(cell_id))
        except CellIdError as exc:
            raise BotError(f"--cells: {exc}") from None
    if not cells:
        raise BotError("--cells: give at least one cell id, such as `BertModel::test_onnx_export_static`")
    return cells


def _named_cells(selection_file: Path | None, rerun_of: Path | None) -> list:
    """The cells a selection file lists, or those a report says still need their confirming re-run."""
    from bot.cells import Cell

    if rerun_of:
        from bot.report.model import load_report

        return [Cell.parse(cell_id) for cell_id in load_report(rerun_of).needs_rerun]
    from bot.select.selection_file import read_selection

    return read_selection(selection_file)
