"""`export-bot run`: select cells, run them under pytest (one item per cell), write JUnit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from bot.cli.common import DEFAULT_SKIPLISTS, EXIT_FAILURE, EXIT_OK, BotError, handle_errors, skiplists_option


def _workers(value: str) -> int | str:
    if value == "auto":
        return value
    if value.isdigit():
        return int(value)
    raise click.BadParameter(f"{value!r}: a number of workers (0 runs in-process, without crash isolation) or 'auto'")


@click.command()
@click.option("--models", multiple=True, help="Model classes (repeat or comma-separate); added to --preset.")
@click.option("--preset", default=None, help="A preset of the model source: smoke, core, all (default: smoke when no --models).")
@click.option("--selection", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The cells of `export-bot select --json FILE` instead of --models/--preset.")
@click.option("--backends", multiple=True, help="dynamo, onnx, openvino, executorch (repeat or comma-separate; default all).")
@click.option("--shapes", multiple=True, help="static, dynamic (default both).")
@click.option("--generate/--no-generate", default=True, show_default=True, help="Include the generate path of generative classes.")
@click.option("--probe", is_flag=True, help="Also run skiplisted cells, recording probe=true and their real outcome.")
@click.option("--shard", default=None, metavar="I/N", help="Run only shard I of N (balanced, deterministic).")
@click.option("--durations", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="An earlier JUnit file: its testcase times balance --shard and order the cells.")
@click.option("-n", "workers", default="auto", show_default=True,
              help="pytest-xdist workers; 0 runs in-process (no crash isolation).")
@click.option("--source", default=None, help="Model source: zoo or transformers-tests:PATH (default: [tool.export-bot] source).")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=Path("export-junit.xml"),
              show_default=True, help="Where to write the JUnit XML.")
@skiplists_option
@click.option("--cell-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds before a cell is stopped as a timeout (default: [tool.export-bot] cell-timeout, 1000).")
@handle_errors
def run(models, preset, selection, backends, shapes, generate, probe, shard, durations, workers, source, junit,
        skiplists_dir, cell_timeout) -> None:
    """Run the conformance cells and write JUnit; exits 0 when every cell ran (failures are data)."""
    from bot.run.session import COMPLETED, SessionOptions, run_session

    workers = _workers(workers)
    plan = build_plan(
        models=models, preset=preset, selection_file=selection, backends=backends, shapes=shapes, generate=generate,
        probe=probe, shard=shard, durations_file=durations, source=source, skiplists_dir=skiplists_dir,
        cell_timeout=cell_timeout,
    )
    click.echo(f"export-bot run: {len(plan.cells)} cells from {plan.source}"
               + (f", shard {plan.shard}" if plan.shard else "") + f" → {junit}", err=True)
    log = junit.with_name(junit.stem + ".pytest.log")  # pytest's own output, e.g. stack dumps of timed-out cells
    code = run_session(plan, SessionOptions(junit=junit, workers=workers, log=log))
    if code not in COMPLETED:
        click.echo(f"error: the run did not complete (pytest exit status {code}); {junit} may be partial", err=True)
        raise SystemExit(EXIT_FAILURE)
    raise SystemExit(EXIT_OK)


def build_plan(*, models, preset, selection_file, backends, shapes, generate, probe, shard, durations_file, source,
               skiplists_dir, cell_timeout):
    """Options → a checked RunPlan; every usage problem becomes a BotError (exit 2) before anything runs."""
    from bot.cells import BACKENDS, SHAPES
    from bot.run.plan import RunPlan
    from bot.run.selection import Selection, SelectionError, executorch_targets, select_from_source, split_names
    from bot.run.shard import ShardError, parse_shard, read_durations, select_shard
    from bot.run.sources import SourceError, get_source
    from bot.settings import SettingsError, load_settings
    from bot.skiplist.model import SkiplistError, load_skiplists

    try:
        settings = load_settings()
        spec = source or settings.source
        skiplists = skiplists_dir or (settings.skiplists if settings.skiplists.is_dir() else DEFAULT_SKIPLISTS)
        load_skiplists(skiplists)  # fail on a broken skiplist here, not once per cell
        model_source = get_source(spec)
        shard_spec = parse_shard(shard) if shard else None
        chosen = Selection(
            models=split_names(models),
            preset=preset,
            backends=split_names(backends) or BACKENDS,
            shapes=split_names(shapes) or SHAPES,
            generate=generate,
        )
        if selection_file and (models or preset):
            raise BotError("--selection already names the cells; leave out --models and --preset")
        if selection_file:
            from bot.select.selection_file import SelectionFileError, read_selection

            try:
                cells = read_selection(selection_file)
            except SelectionFileError as exc:
                raise BotError(str(exc)) from None
        else:
            cells = select_from_source(chosen, model_source)  # checks the options before the slow part
            if any(cell.backend == "executorch" for cell in cells):
                # Asking the ExecuTorch runtime for its delegates imports torch: only when it matters.
                cells = select_from_source(replace(chosen, targets=executorch_targets()), model_source)
        times = read_durations(durations_file) if durations_file else {}
        if shard_spec:
            cells = select_shard(cells, shard_spec, times)
    except (SelectionError, ShardError, SourceError, SettingsError, SkiplistError) as exc:
        raise BotError(str(exc)) from None
    return RunPlan(
        cells=tuple(cells),
        source=model_source.spec if hasattr(model_source, "spec") else spec,
        skiplists=str(Path(skiplists).resolve()),
        probe=probe,
        shard=shard,
        cell_timeout=cell_timeout or settings.cell_timeout,
        durations=times,
    )
