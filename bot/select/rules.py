"""Selection rules of docs/selection.md, pure: changed files and the trees at both refs → reasons per model class → cells."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from bot.cells import Cell, cells_for
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


def decide(
    changes: Sequence[Change],
    head: ModelTree,
    base: ModelTree,
    settings: Settings,
    catalog: Catalog,
    skiplist_changes: Sequence[EntryChange] = (),
    notes: Sequence[str] = (),
    models_dir: str = MODELS_DIR,
) -> Selection:
    """Apply the rules; every decision is recorded as a Reason, every file no rule concerns as ignored."""
    reasons: dict[str, list[Reason]] = {}
    partial: dict[str, set[Cell]] = {}  # classes selected for some cells only (skiplist entries)
    notes = list(notes) + list(catalog.notes)

    def add(model_class: str, reason: Reason) -> None:
        if reason not in reasons.setdefault(model_class, []):
            reasons[model_class].append(reason)

    changed: dict[str, str] = {}  # type → first file that changed it
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

    removed = sorted(t for t in changed if t not in head.types and t in base.types)
    for model_type, path in sorted(changed.items()):
        classes = head.classes(model_type)
        for model_class in classes:
            add(model_class, Reason("changed", path))
        if not classes and model_type not in removed:
            notes.append(f"model type `{model_type}` exports no model class at head ({path})")
    for model_type in removed:
        notes.append(
            f"model type `{model_type}` was removed: its classes {list(base.classes(model_type))} have no cells"
        )

    dependents = head.dependents(changed) if settings.dependents else {}
    for model_type, via in dependents.items():
        for model_class in head.classes(model_type):
            add(model_class, Reason("dependent", f"{model_type} imports {via}"))

    descendants = {
        t: via for t, via in head.modular_descendants(changed).items() if t not in dependents and t not in changed
    }
    if settings.run_modular_descendants:
        for model_type, via in descendants.items():
            for model_class in head.classes(model_type):
                add(model_class, Reason("modular-descendant", f"{model_type} inherits from {via}"))

    if shared:
        detail = shared[0] + (f" and {len(shared) - 1} more shared files" if len(shared) > 1 else "")
        for model_class in catalog.core:
            add(model_class, Reason("core", detail))

    for entry in skiplist_changes:
        cells = covered_cells(entry, catalog.is_generative)
        if not cells:
            notes.append(f"{entry.describe}: the scope covers no cell")
            continue
        add(entry.model_class, Reason("skiplist", entry.describe))
        partial.setdefault(entry.model_class, set()).update(cells)

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


@lru_cache(maxsize=2)
def _row_size(generative: bool) -> int:
    return sum(1 for _ in cells_for("_", generative=generative))
