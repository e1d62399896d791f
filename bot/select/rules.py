"""Selection rules of docs/selection.md, pure: changed files and the trees at both refs → reasons per model class → cells."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from bot import registry
from bot.cells import Cell, cells_for
from bot.scopes import ScopeWalk
from bot.select.catalog import Catalog
from bot.select.changes import Change
from bot.select.selection import KINDS, Reason, Selection
from bot.select.skiplist_changes import EntryChange, covered_cells
from bot.select.tree import MODELS_DIR, ModelTree, split_model_path
from bot.settings import Settings

# Files of a model type folder that define what gets exported; processors, tokenizers and
# image processors only shape inputs, which the bot's sources build themselves.
MODEL_STEMS = ("modeling_", "modular_", "configuration_")


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


def model_type_of(path: str, models_dir: str = MODELS_DIR) -> str | None:
    """The model type a modeling/modular/configuration file belongs to, else None."""
    split = split_model_path(path, models_dir)
    if split and split[1].startswith(MODEL_STEMS):
        return split[0]
    return None


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
) -> Selection:
    """Apply the rules; every decision is recorded as a Reason, every file no rule concerns as ignored.

    `walk` maps a changed skiplist entry to the cells it covers: the checkout's own, None for the bot's.
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
    selected: set[Cell] = set()
    for model_class, rs in reasons.items():
        if any(r.kind != "skiplist" for r in rs):
            selected.update(cells_for(model_class, generative=catalog.is_generative(model_class)))
        else:
            selected.update(partial[model_class])
    return Selection(
        cells=tuple(sorted(selected, key=lambda c: c.id)),
        reasons={c: tuple(sorted(rs, key=lambda r: KINDS.index(r.kind))) for c, rs in reasons.items()},
        modular_descendants=descendants,
        unbuildable=catalog.unbuildable(reasons),
        ignored=tuple(dict.fromkeys(ignored)),
        removed_types=tuple(removed),
        notes=tuple(notes),
        full_sweep_cells=sum(_row_size(catalog.is_generative(c)) for cs in head.classes_by_type.values() for c in cs),
        full_sweep_classes=sum(len(cs) for cs in head.classes_by_type.values()),
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


@registry.cached(maxsize=2)
def _row_size(generative: bool) -> int:
    return sum(1 for _ in cells_for("_", generative=generative))
