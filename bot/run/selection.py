"""Which cells a run covers: model source + `--models`/`--preset`/`--backends`/`--shapes`/`--generate` → cells."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.cells import BACKENDS, SHAPES, Cell, CellIdError, cells_for, kept_by
from bot.errors import BotError
from bot.models.sources.base import ClassInfo, ModelSource

logger = logging.getLogger(__name__)

DEFAULT_PRESET = "smoke"  # docs/runner.md: the main job's default


class SelectionError(BotError, ValueError):
    """Options that select nothing sensible (unknown preset, backend or shape); the message lists the choices."""


@dataclass(frozen=True)
class CellRequest:
    """The matrix options a run was given (`--models`, `--preset`, …); empty `models` and no `preset` means the
    default preset. The pull request's selection, cells with their reasons, is `bot.select.Selection`."""

    models: tuple[str, ...] = ()
    preset: str | None = None
    backends: tuple[str, ...] = BACKENDS
    shapes: tuple[str, ...] = SHAPES
    generate: bool = True  # include the generate path of generative classes
    targets: tuple[str, ...] = ("xnnpack",)


def split_names(values: Iterable[str]) -> tuple[str, ...]:
    """`--models A,B --models C` → (A, B, C): repeated options and comma lists alike, order kept, no duplicates."""
    names = (name.strip() for value in values for name in value.split(","))
    return tuple(dict.fromkeys(name for name in names if name))


def _check_choices(option: str, values: Sequence[str], choices: Sequence[str]) -> tuple[str, ...]:
    unknown = [value for value in values if value not in choices]
    if unknown:
        raise SelectionError(f"{option}: unknown {', '.join(map(repr, unknown))}; choose from {', '.join(choices)}")
    if not values:
        raise SelectionError(f"{option}: give at least one of {', '.join(choices)}")
    # The matrix order, whatever order the user typed.
    return tuple(choice for choice in choices if choice in values)


def model_classes(
    selection: CellRequest, classes: Sequence[ClassInfo], presets: dict[str, tuple[str, ...]]
) -> list[str]:
    """The model classes to run: the preset's, then `--models` (which may name classes the source lacks)."""
    chosen: list[str] = []
    preset = selection.preset or (None if selection.models else DEFAULT_PRESET)
    if preset is not None:
        if preset not in presets:
            raise SelectionError(f"--preset {preset!r}: unknown preset; choose from {', '.join(presets)}")
        chosen.extend(presets[preset])
    chosen.extend(selection.models)
    return list(dict.fromkeys(chosen))


def requested_cells(
    selection: CellRequest, classes: Sequence[ClassInfo], presets: dict[str, tuple[str, ...]]
) -> list[Cell]:
    """Every cell of the chosen rows, in the seed's order per class; pure (the caller asks the source)."""
    backends = _check_choices("--backends", selection.backends, BACKENDS)
    shapes = _check_choices("--shapes", selection.shapes, SHAPES)
    known = {info.model_class: info for info in classes}
    cells: list[Cell] = []
    for name in model_classes(selection, classes, presets):
        info = known.get(name)
        if info is None:
            # Not silently dropped: the forward row is kept so the runner reports each cell as not
            # buildable by this source, naming what the source lacks (we cannot know if it generates).
            logger.warning("the model source has no class %s: its cells will be reported not buildable", name)
        generative = bool(info and info.generative and selection.generate)
        cells.extend(
            cells_for(name, generative=generative, backends=backends, shapes=shapes, targets=selection.targets)
        )
    return cells


def select_from_source(selection: CellRequest, source: ModelSource) -> list[Cell]:
    """`requested_cells` on what `source` lists; the checkout's own test methods where its tests judge (docs/runner.md)."""
    from bot.run.checkout_tests import judged_by_checkout

    classes, presets = source.classes(), source.presets()
    if not judged_by_checkout(source):
        return requested_cells(selection, classes, presets)
    cells: list[Cell] = []
    for cell_class, seed_cells in _rows(requested_cells(selection, classes, presets)).items():
        cells.extend(_checkout_row(selection, source, cell_class, seed_cells))
    return cells


def _rows(cells: Sequence[Cell]) -> dict[str, list[Cell]]:
    rows: dict[str, list[Cell]] = {}
    for cell in cells:
        rows.setdefault(cell.model_class, []).append(cell)
    return rows


def _checkout_row(selection: CellRequest, source: Any, model_class: str, seed_cells: list[Cell]) -> list[Cell]:
    """The cells of one class as the checkout's test methods name them, filtered as the options ask.

    A class whose test module does not import, or that no test class lists, keeps the seed's row:
    its cells then report why (a setup problem, not buildable). Every collected test is a cell:
    one whose name the grammar cannot read, or reads otherwise than its expansion declares, is
    kept by its name (only the checkout's test judges it) and said as a warning, never dropped.
    """
    try:
        names = source.test_methods(model_class)
    except Exception:
        return seed_cells
    found = []
    for name in names:
        cell = placed_cell(source, model_class, name)
        if _wanted(selection, cell):
            found.append(cell)
    seed_order = {cell: index for index, cell in enumerate(seed_cells)}
    return sorted(found, key=lambda cell: (cell not in seed_order, seed_order.get(cell, 0), cell.name)) or seed_cells


def placed_cell(source: Any, model_class: str, name: str) -> Cell:
    """The cell a collected test is: read from its name, checked against what its expansion declares.

    A name the grammar cannot read is kept verbatim. A name read as another variant than its
    expansion declares (a `name_func` the grammar does not follow) keeps its reading, since its id
    is the test's name, and is said as a warning naming both, so a skiplist scope for it is checked.
    """
    from bot.run.declared import declared_arguments, disagreement

    try:
        cell = Cell.from_testcase(model_class, name)
    except CellIdError as exc:
        logger.warning("%s: %s is not a name the bot can read (%s); kept as a cell by its name", model_class, name, exc)
        return Cell.from_testcase(model_class, name, lenient=True)
    if cell.test:  # a name with no backend in it: no expansion to check it against
        return cell
    try:
        test_class, _ = source.test_class_for(model_class, generate=cell.generate)
        arguments = declared_arguments(getattr(test_class, name, None))
    except Exception:
        arguments = None  # the name's reading stands; the cell itself reports what is wrong
    problem = disagreement(cell, arguments) if arguments is not None else None
    if problem:
        logger.warning("%s: %s reads as another variant than it declares: %s", model_class, name, problem)
    return cell


def _wanted(selection: CellRequest, cell: Cell) -> bool:
    return (
        kept_by(cell, selection.backends, selection.shapes)
        and (selection.generate or not cell.generate)
        and (cell.target is None or cell.target in selection.targets)
    )


def executorch_targets(cache_dir: Path | None = None) -> tuple[str, ...]:
    """ExecuTorch delegates runnable here: `xnnpack`, plus `mlx` when the runtime registers MLXBackend.

    The seed's `_EXECUTORCH_BACKENDS`: the MLX Python package can be installed without the
    native runtime, so the registry, not the import, decides. Asking the registry imports
    torch and the runtime (about 10 s), so the answer is cached per installed ExecuTorch build.
    """
    targets = ("xnnpack",)
    try:
        if (
            importlib.util.find_spec("executorch") is None
            or importlib.util.find_spec("executorch.backends.mlx") is None
        ):
            return targets
    except (ImportError, ValueError):
        return targets
    cache = _targets_cache(cache_dir)
    if cache is not None and cache.is_file():
        cached = tuple(cache.read_text(encoding="utf-8").split())
        if cached and cached[0] == "xnnpack":
            return cached
    try:
        from executorch.runtime import Runtime

        if "MLXBackend" in Runtime.get().backend_registry.registered_backend_names:
            targets += ("mlx",)
    except ImportError:
        return targets
    if cache is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(" ".join(targets) + "\n", encoding="utf-8")
        except OSError:
            pass  # a read-only home only costs the next run its 10 s
    return targets


def _targets_cache(cache_dir: Path | None) -> Path | None:
    """`~/.cache/export-bot/executorch-targets-<version>-<install mtime>`; None when ExecuTorch has no metadata."""
    try:
        dist = importlib.metadata.distribution("executorch")
        origin = Path(str(dist.locate_file("executorch")))
        stamp = f"{dist.version}-{int(origin.stat().st_mtime)}"
    except (importlib.metadata.PackageNotFoundError, OSError):
        return None
    base = cache_dir or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "export-bot"
    return base / f"executorch-targets-{stamp}"
