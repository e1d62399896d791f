"""The selection a pull request runs: cells, why each model class is in, and what was left out, as JSON."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.cells import Cell

# Reason kinds, in the order a class's reasons are listed.
KINDS = ("changed", "dependent", "imports", "footprint", "modular-descendant", "core", "skiplist")
NOTHING = "no export-relevant changes"
UNCHANGED_CODE = "comments, docstrings or formatting only"


@dataclass(frozen=True)
class Reason:
    """Why a model class is selected: `kind` (one of KINDS) and what triggered it (a file, a type, an entry)."""

    kind: str
    detail: str

    def to_json(self) -> dict:
        return {"kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class Sample:
    """A change that reaches most model classes through the import graph runs a sample of them on the PR.

    `reached` classes in all, `sampled` of them run here within `budget_minutes` of estimated CPU
    time (`minutes`); `paths` are the changed files that reached them. The rest is measured on main
    after the merge: the push makes a full sweep due (docs/selection.md, "The sample").
    """

    reached: int
    sampled: tuple[str, ...]
    paths: tuple[str, ...]
    minutes: float | None  # None: no cell times were given
    budget_minutes: float

    @property
    def sentence(self) -> str:
        return (
            f"this change reaches {self.reached:,} model classes; {len(self.sampled)} sampled here; "
            "the rest is measured on main after the merge"
        )

    def to_json(self) -> dict:
        return {
            "reached_classes": self.reached,
            "sampled": list(self.sampled),
            "paths": list(self.paths),
            "minutes": None if self.minutes is None else round(self.minutes, 1),
            "budget_minutes": self.budget_minutes,
            "sentence": self.sentence,
        }


@dataclass(frozen=True)
class Selection:
    cells: tuple[Cell, ...]
    reasons: Mapping[str, tuple[Reason, ...]]  # model class → reasons
    modular_descendants: Mapping[str, str] = field(default_factory=dict)  # type → type it inherits from
    unbuildable: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()  # changed files no rule concerns
    removed_types: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    full_sweep_cells: int = 0
    full_sweep_classes: int = 0
    # The PR's diff hunks, head side: path → inclusive line ranges. The diff step marks a
    # failure's culprit line "changed in this PR" when it falls inside one.
    changed_lines: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    # Changed .py files whose code is the same (comments, docstrings or formatting only): they select nothing.
    unchanged_code: tuple[str, ...] = ()
    sample: Sample | None = None  # set when a change reaches most classes and only a sample runs here

    @property
    def summary(self) -> str:
        if not self.unchanged_code:
            return self._selected
        first, more = self.unchanged_code[0], len(self.unchanged_code) - 1
        files = first + (f" and {more} more files" if more > 1 else " and 1 more file" if more else "")
        return f"{self._selected}; {files}: {UNCHANGED_CODE}"

    @property
    def _selected(self) -> str:
        if self.cells:
            kinds = sorted({r.kind for rs in self.reasons.values() for r in rs}, key=KINDS.index)
            text = f"{len(self.cells)} cells of {len(self.reasons)} model classes ({', '.join(kinds)})"
            if self.unbuildable:
                # Said before anything runs: these classes' cells will be "not buildable by this source".
                text += f"; {len(self.unbuildable)} of them not buildable by the model source"
            if self.sample:
                # The summary is the comment's "Selected:" line: the PR's reader learns the rest runs on main.
                text += f"; {self.sample.sentence}"
            return text
        if self.reasons or self.removed_types:
            return "export-relevant changes, but no cell to run (see notes)"
        return NOTHING

    def to_json(self) -> dict:
        share = len(self.cells) / self.full_sweep_cells if self.full_sweep_cells else 0.0
        return {
            "summary": self.summary,
            "counts": {
                "cells": len(self.cells),
                "classes": len(self.reasons),
                "full_sweep_cells": self.full_sweep_cells,
                "full_sweep_classes": self.full_sweep_classes,
                "share_of_full_sweep": round(share, 6),
            },
            "classes": {cls: [r.to_json() for r in rs] for cls, rs in sorted(self.reasons.items())},
            "modular_descendants": dict(sorted(self.modular_descendants.items())),
            "unbuildable": list(self.unbuildable),
            "removed_types": list(self.removed_types),
            "ignored_files": list(self.ignored),
            "unchanged_code": list(self.unchanged_code),
            "notes": list(self.notes),
            "sample": self.sample.to_json() if self.sample else None,
            "changed_lines": {path: [list(r) for r in ranges] for path, ranges in sorted(self.changed_lines.items())},
            "cells": [c.id for c in self.cells],
        }
