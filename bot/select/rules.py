"""Selection rules of docs/selection.md, pure: changed files and the trees at both refs → reasons per model class → cells."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

from bot import registry
from bot.cells import Cell, CellIdError, cells_for
from bot.scopes import ScopeWalk
from bot.select import reach
from bot.select.catalog import Catalog
from bot.select.changes import Change
from bot.select.imports import ImportGraph
from bot.select.selection import KINDS, Reason, Sample, Selection
from bot.select.skiplist_changes import EntryChange, covered_cells
from bot.select.tree import MODELS_DIR, ModelTree, model_type_of
from bot.settings import Settings

# Reasons that select some cells of a class; any other reason selects its whole row.
PARTIAL_KINDS = ("skiplist", "footprint")


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern:
    # `**` crosses folders, `*` and `?` stay inside one (fnmatch would let `*` cross `/`).
    out = "".join(
        ".*" if part == "**" else "[^/]*" if part == "*" else "[^/]" if part == "?" else re.escape(part)
        for part in re.split(r"(\*\*|\*|\?)", pattern)
    )
    return re.compile(out.replace(".*/", "(?:.*/)?") if "**/" in pattern else out)


def match_path(path: str, patterns: Iterable[str]) -> bool:
    """Does `path` (relative to the repository root) match one of the glob `patterns`?"""
    return any(_glob(p).fullmatch(path) for p in patterns)


def classify(path: str, settings: Settings, models_dir: str = MODELS_DIR) -> str:
    """`model`, `shared`, `skiplist` or `other`, checked in that order."""
    if model_type_of(path, models_dir):
        return "model"
    if match_path(path, settings.shared_paths):
        return "shared"
    if match_path(path, settings.skiplist_paths):
        return "skiplist"
    return "other"


class _Reasons(dict):
    """model class → its reasons, each kept once, in the order the rules found them."""

    def add(self, model_class: str, reason: Reason) -> None:
        if reason not in self.setdefault(model_class, []):
            self[model_class].append(reason)


def decide(
    changes: Sequence[Change],
    head: ModelTree,
    base: ModelTree,
    settings: Settings,
    catalog: Catalog,
    skiplist_changes: Sequence[EntryChange] = (),
    notes: Sequence[str] = (),
    models_dir: str = MODELS_DIR,
    walk: ScopeWalk | None = None,
    *,
    graph: ImportGraph | None = None,
    observed: Mapping[str, Mapping[str, str]] | None = None,
    seconds: Callable[[Cell], float] | None = None,
) -> Selection:
    """Apply the rules; every decision is recorded as a Reason, every file no rule concerns as ignored.

    `walk` maps a changed skiplist entry to the cells it covers: the checkout's own, None for the bot's.
    A changed file outside a model folder is decided by `observed` (path → {cell id: detail}, the
    cells main's sweeps saw run it) when it is there, else by what it reaches in the head's import
    `graph`; `seconds` (a cell's estimated CPU seconds) bounds the sample of a change reaching most classes.
    """
    reasons = _Reasons()
    notes = list(notes) + list(catalog.notes)
    changed, shared, ignored = _sort_paths(changes, settings, models_dir)
    removed = _changed_types(changed, head, base, reasons, notes)
    descendants = _related_types(changed, head, settings, reasons)
    if shared:
        detail = shared[0] + (f" and {len(shared) - 1} more shared files" if len(shared) > 1 else "")
        for model_class in catalog.core:
            reasons.add(model_class, Reason("core", detail))
    partial = _skiplist_reasons(skiplist_changes, catalog, reasons, notes, walk)
    observed = observed or {}
    ran = _footprints(observed, [*shared, *ignored], notes)
    observed_sample = _observed_sample(ran, observed, head, catalog, reasons, seconds)
    for model_class, (cells, detail) in ran.items():
        if observed_sample is None or model_class in observed_sample.sampled or model_class in reasons:
            reasons.add(model_class, Reason("footprint", detail))
            partial.setdefault(model_class, set()).update(cells)
    graphed = [p for p in dict.fromkeys(ignored) if p not in observed]
    sample, unreached = _import_reasons(graphed, graph, head, catalog, reasons, seconds, models_dir)
    sample = _joined(observed_sample, sample)
    selected: set[Cell] = set()
    for model_class, rs in reasons.items():
        if any(r.kind not in PARTIAL_KINDS for r in rs):
            selected.update(cells_for(model_class, generative=catalog.is_generative(model_class)))
        else:
            selected.update(partial[model_class])
    return Selection(
        cells=tuple(sorted(selected, key=lambda c: c.id)),
        reasons={c: tuple(sorted(rs, key=lambda r: KINDS.index(r.kind))) for c, rs in reasons.items()},
        modular_descendants=descendants,
        unbuildable=catalog.unbuildable(reasons),
        # Left out: the files observed to run no cell, and those reaching no model class.
        ignored=tuple(p for p in dict.fromkeys(ignored) if (not observed[p] if p in observed else p in unreached)),
        removed_types=tuple(removed),
        notes=tuple(notes),
        full_sweep_cells=sum(_row_size(catalog.is_generative(c)) for cs in head.classes_by_type.values() for c in cs),
        full_sweep_classes=sum(len(cs) for cs in head.classes_by_type.values()),
        sample=sample,
    )


def _sort_paths(changes: Sequence[Change], settings: Settings, models_dir: str):
    """The changed model types (type → first file that changed it), the shared files and the ignored ones."""
    changed: dict[str, str] = {}
    shared, ignored = [], []
    for change in changes:
        for path in change.paths:
            kind = classify(path, settings, models_dir)
            if kind == "model":
                changed.setdefault(model_type_of(path, models_dir), path)
            elif kind == "shared":
                shared.append(path)
            elif kind == "other":
                ignored.append(path)
    return changed, shared, ignored


def _changed_types(changed, head: ModelTree, base: ModelTree, reasons: _Reasons, notes: list[str]) -> list[str]:
    """Every class of a changed type is selected; the removed types are returned, and noted."""
    removed = sorted(t for t in changed if t not in head.types and t in base.types)
    for model_type, path in sorted(changed.items()):
        classes = head.classes(model_type)
        for model_class in classes:
            reasons.add(model_class, Reason("changed", path))
        if not classes and model_type not in removed:
            notes.append(f"model type `{model_type}` exports no model class at head ({path})")
    for model_type in removed:
        notes.append(
            f"model type `{model_type}` was removed: its classes {list(base.classes(model_type))} have no cells"
        )
    return removed


def _related_types(changed, head: ModelTree, settings: Settings, reasons: _Reasons) -> dict[str, str]:
    """Dependents (and, when configured, modular descendants) of the changed types; the descendants are returned."""
    dependents = head.dependents(changed) if settings.dependents else {}
    for model_type, via in dependents.items():
        for model_class in head.classes(model_type):
            reasons.add(model_class, Reason("dependent", f"{model_type} imports {via}"))
    descendants = {
        t: via for t, via in head.modular_descendants(changed).items() if t not in dependents and t not in changed
    }
    if settings.run_modular_descendants:
        for model_type, via in descendants.items():
            for model_class in head.classes(model_type):
                reasons.add(model_class, Reason("modular-descendant", f"{model_type} inherits from {via}"))
    return descendants


def _skiplist_reasons(
    skiplist_changes, catalog: Catalog, reasons: _Reasons, notes: list[str], walk: ScopeWalk | None
) -> dict[str, set[Cell]]:
    """A changed skiplist entry selects only the cells its scope covers: class → those cells."""
    partial: dict[str, set[Cell]] = {}
    for entry in skiplist_changes:
        cells = covered_cells(entry, catalog.is_generative, walk)
        if not cells:
            notes.append(f"{entry.describe}: the scope covers no cell")
            continue
        reasons.add(entry.model_class, Reason("skiplist", entry.describe))
        partial.setdefault(entry.model_class, set()).update(cells)
    return partial


def _footprints(
    observed: Mapping[str, Mapping[str, str]], paths: Sequence[str], notes: list[str]
) -> dict[str, tuple[set[Cell], str]]:
    """The cells main's sweeps saw run a changed file (reason `footprint`): class → its cells and the first detail."""
    ran: dict[str, tuple[set[Cell], str]] = {}
    for path in dict.fromkeys(paths):
        for cell_id, detail in sorted(observed.get(path, {}).items()):
            try:
                cell = Cell.parse(cell_id)
            except CellIdError as exc:
                notes.append(f"footprint of {path} names no cell: {exc}")
                continue
            ran.setdefault(cell.model_class, (set(), detail))[0].add(cell)
    return ran


def _observed_sample(ran, observed, head: ModelTree, catalog: Catalog, reasons: _Reasons, seconds) -> Sample | None:
    """A change main saw run by more than reach.SAMPLE_ABOVE classes runs a sample of them, as an import reach does.

    Code every model runs (a layer base, the attention interface) is recorded in nearly every cell's
    footprint: precise, but the whole sweep. The sample bounds the PR; the push makes the sweep due.
    """
    if len(ran) <= reach.SAMPLE_ABOVE:
        return None
    types = {c: t for t, classes in head.classes_by_type.items() for c in classes}
    reached = {c: types.get(c, catalog.families.get(c, "other")) for c in ran}
    return _sample(reached, {p for p, cells in observed.items() if cells}, catalog, seconds)


def _joined(first: Sample | None, second: Sample | None) -> Sample | None:
    """One sample for a PR whose footprints and import graph both sampled: the union of what each runs."""
    if first is None or second is None:
        return first or second
    minutes = None if first.minutes is None or second.minutes is None else first.minutes + second.minutes
    sampled = tuple(dict.fromkeys((*first.sampled, *second.sampled)))
    paths = tuple(sorted({*first.paths, *second.paths}))
    return Sample(max(first.reached, second.reached), sampled, paths, minutes, first.budget_minutes)


def _import_reasons(
    paths: Sequence[str],
    graph: ImportGraph | None,
    head: ModelTree,
    catalog: Catalog,
    reasons: _Reasons,
    seconds: Callable[[Cell], float] | None,
    models_dir: str,
) -> tuple[Sample | None, set[str]]:
    """The classes the changed files reach through the import graph (reason `imports`, or `changed` for a
    type's own test file); a sample of them when they are more than reach.SAMPLE_ABOVE.

    Returns the sample, if any, and the files that reach no model class.
    """
    if graph is None or not paths:
        return None, set(paths)
    chains = {t: c for t, c in reach.reached_types(graph.reached_by(paths), models_dir).items() if head.classes(t)}
    reached = {c: t for t, chain in chains.items() for c in head.classes(t)}
    origins = {chain[-1] for chain in chains.values()}
    sample = _sample(reached, origins, catalog, seconds) if len(reached) > reach.SAMPLE_ABOVE else None
    run = set(reached)
    if sample:
        # The classes other rules run whole anyway keep their `imports` reason too: it costs nothing.
        whole = {c for c, rs in reasons.items() if any(r.kind not in PARTIAL_KINDS for r in rs)}
        run = set(sample.sampled) | (whole & run)
    for model_class in sorted(run):
        chain = chains[reached[model_class]]
        own = len(chain) == 1  # the changed file is the type's own test file
        reasons.add(model_class, Reason("changed", chain[0]) if own else Reason("imports", reach.describe(chain)))
    # A file whose every type another changed file reached first still reaches them: asked alone.
    return sample, {p for p in paths if p not in origins and not _reaches_a_class(graph, p, head, models_dir)}


def _sample(
    reached: Mapping[str, str], origins: set[str], catalog: Catalog, seconds: Callable[[Cell], float] | None
) -> Sample:
    """The sample of `reached` (class → type) the PR runs, costed by `seconds` per cell when given."""

    def cost(model_class: str) -> float:
        return sum(map(seconds, cells_for(model_class, generative=catalog.is_generative(model_class))))

    sampled, minutes = reach.choose_sample(reached, catalog, cost if seconds else None)
    return Sample(
        len(reached), sampled, tuple(sorted(origins)), minutes if seconds else None, reach.SAMPLE_BUDGET_MINUTES
    )


def _reaches_a_class(graph: ImportGraph, path: str, head: ModelTree, models_dir: str) -> bool:
    return any(head.classes(t) for t in reach.reached_types(graph.reached_by([path]), models_dir))


@registry.cached(maxsize=2)
def _row_size(generative: bool) -> int:
    return sum(1 for _ in cells_for("_", generative=generative))
