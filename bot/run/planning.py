"""Run options → a checked RunPlan: which cells, from which source, under which skiplists and shard."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.cells import BACKENDS, SHAPES, Cell, kept_by
from bot.run.plan import PlanError, RunPlan
from bot.skiplist.model import LoadedSkiplists


def build_plan(
    *,
    models=(),
    preset=None,
    named: Sequence[Cell] | None = None,
    backends=(),
    shapes=(),
    generate=True,
    probe=False,
    shard=None,
    durations_file=None,
    durations=None,
    source=None,
    skiplists: LoadedSkiplists,
    cell_timeout=None,
    settings=None,
    footprints=False,
) -> RunPlan:
    """Every usage problem is a `BotError` naming the option, raised before anything runs.

    `named` are cells chosen elsewhere (a selection file, a report's re-runs); --backends,
    --shapes and --no-generate narrow them, and --models/--preset cannot be added to them.
    `skiplists` are the command's, read (and so checked) once at its edge; the plan names their folder.
    """
    from bot.models.sources import get_source
    from bot.run.selection import CellRequest, split_names
    from bot.run.shard import parse_shard, select_shard
    from bot.settings import load_settings

    settings = settings or load_settings()
    model_source = get_source(source or settings.source)
    shard_spec = parse_shard(shard) if shard else None
    chosen = CellRequest(
        models=split_names(models),
        preset=preset,
        backends=split_names(backends) or settings.backends or BACKENDS,
        shapes=split_names(shapes) or SHAPES,
        generate=generate,
    )
    if named is not None and (models or preset):
        raise PlanError("--selection and --rerun-of already name the cells; leave out --models and --preset")
    cells = narrow(named, chosen) if named is not None else _from_source(chosen, model_source)
    times = _times(durations, durations_file)
    if shard_spec:
        cells = select_shard(cells, shard_spec, times)
    return RunPlan(
        cells=tuple(cells),
        source=model_source.spec,
        skiplists=str(skiplists.folder.resolve()),
        probe=probe,
        shard=shard,
        cell_timeout=cell_timeout or settings.cell_timeout,
        rules=settings.rules,
        durations=times,
        footprints=footprints,
    )


def _times(durations, durations_file) -> dict[str, float]:
    """`durations`: seconds per cell id read by the caller (main's baseline.json is read above this layer)."""
    from bot.run.shard import read_durations

    if durations is not None:
        return dict(durations)
    return read_durations(durations_file) if durations_file else {}


def _from_source(chosen, model_source) -> list[Cell]:
    from bot.run.selection import executorch_targets, select_from_source

    cells = select_from_source(chosen, model_source)  # checks the options before the slow part
    # Only ExecuTorch declares targets today, and only its runtime is asked which are runnable here.
    if any(cell.backend == "executorch" for cell in cells):
        # Asking the ExecuTorch runtime for its delegates imports torch: only when it matters.
        cells = select_from_source(replace(chosen, targets=executorch_targets()), model_source)
    return cells


def narrow(cells: Sequence[Cell], chosen) -> list[Cell]:
    """Keep the named cells that --backends, --shapes and --no-generate allow (all, by default)."""
    return [c for c in cells if kept_by(c, chosen.backends, chosen.shapes) and (chosen.generate or not c.generate)]
