"""Observed impact (docs/selection.md, "Footprints"): the cells whose footprint recorded on main a change touches.

Main's sweeps record which functions of the checkout each cell executed (bot/run/footprint.py) and
main's baseline.json keeps them (docs/baseline.md). `observed_impact` maps a pull request's changed
lines, in the coordinates of its base, to the functions that hold them (read with `ast` from the base
text, so the commit the footprints were recorded at may differ from the base by any lines) and those
to the cells that executed them. `load_footprints` reads them from baseline.json; both are pure but
for the file read. `recorded_footprints` is what `select --footprints` reads: a baseline that is not
there (main has none yet) or records none is not an error, the selection goes on without them and
says why; one that is there but unreadable or forged is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BotError
from bot.files import read_text
from bot.footprints import MODULE, FootprintError, read_tables, spans, split

BASELINE_FORMAT = "export-bot-baseline"
STATE_FILE = "baseline.json"
# How the selection's note begins; the comment lists the notes that begin so (base_settings.comment_notes).
UNAVAILABLE = "main's footprints not available"


class FootprintsError(BotError, ValueError):
    """A baseline.json whose footprints cannot be read; the message says which file and what to do."""


def observed_impact(
    footprints: Mapping[str, Iterable[str]],
    base_texts: Mapping[str, str],
    changed_base_lines: Mapping[str, Sequence[tuple[int, int]]],
) -> dict[str, dict[str, str]]:
    """Changed path → {cell id: what it executed of the change}, for each path some recorded cell executed.

    `footprints`: cell id → `PATH::QUALNAME` names (bot/footprints.py). `changed_base_lines`: path →
    the base's changed lines as inclusive (first, last) ranges; `(n + 1, n)` is a line inserted after
    base line n. Each line is mapped to the innermost function holding it in `base_texts[path]`; a
    line outside every function (imports, class bodies, constants) is module level and touches every
    cell that executed anything of the file, as does a file whose base text is missing or not Python.
    A path no recorded cell executed is absent: the import graph decides it. A path present with no
    cells: cells ran the file, none ran the changed functions.
    """
    index = _by_file(footprints)
    impact: dict[str, dict[str, str]] = {}
    for path, ranges in changed_base_lines.items():
        ran = index.get(path)
        if not ran:
            continue
        touched = _touched(base_texts.get(path), ranges)
        short = path.rsplit("/", 1)[-1]
        found: dict[str, str] = {}
        if MODULE in touched:
            holders = sorted({cell for cells in ran.values() for cell in cells})
            found = {cell: f"executed {short} (its module level changed)" for cell in holders}
        else:
            for qualname in sorted(touched):
                for cell in sorted(ran.get(qualname, ())):
                    found.setdefault(cell, f"executed {short}::{qualname}")
        impact[path] = found
    return impact


def _by_file(footprints: Mapping[str, Iterable[str]]) -> dict[str, dict[str, set[str]]]:
    """path → qualname → the cells that executed it."""
    index: dict[str, dict[str, set[str]]] = {}
    for cell, functions in footprints.items():
        for name in functions:
            path, qualname = split(name)
            index.setdefault(path, {}).setdefault(qualname, set()).add(cell)
    return index


def _touched(text: str | None, ranges: Sequence[tuple[int, int]]) -> set[str]:
    """The qualified names holding the changed lines; `<module>` when the text cannot say."""
    if text is None:
        return {MODULE}
    try:
        by_line = spans(text)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the text
        return {MODULE}
    touched: set[str] = set()
    for first, last in ranges:
        if last < first:
            touched.add(by_line.between(last))
        else:
            touched.update(by_line.at(line) for line in range(first, last + 1))
    return touched


@dataclass(frozen=True)
class Recorded:
    """Main's footprints as `select --footprints` found them: cell id → its functions, or why there are none."""

    cells: Mapping[str, frozenset[str]]
    baseline: str  # the file read, or looked for
    missing: str | None = None  # why none: no baseline of main yet, or one that records none

    def to_json(self) -> dict:
        return {"baseline": self.baseline, "cells": len(self.cells), "not_available": self.missing}


def recorded_footprints(path: Path | str) -> Recorded:
    """Main's footprints from `path` (baseline.json or the folder `export-bot github baseline --out` wrote).

    Nothing there, as on a repository's first run before main's first sweep (`github baseline` found
    no state and wrote nothing), and a baseline that records no footprint yet (an older version, or no
    full sweep since), give none, with the reason: the import graph decides, and the selection says so.
    A file that is there but is no readable baseline (a forged or truncated artifact, a FIFO, one over
    the bounded reader's size) is a FootprintsError, as with `load_footprints`.
    """
    path = Path(path)
    state = path / STATE_FILE if path.is_dir() else path
    if not os.path.lexists(state):  # a dangling symlink is there: the reader refuses it
        return Recorded({}, str(state), f"no baseline of main at {state}: none recorded yet")
    cells = load_footprints(state)
    if not cells:
        return Recorded({}, str(state), "main's baseline records none yet: its next full sweep records them")
    return Recorded(cells, str(state))


def unavailable_note(missing: str, files: int) -> str:
    """The selection's note when main's footprints would have decided `files` changed files but were not there."""
    what = "1 changed file" if files == 1 else f"{files} changed files"
    return f"{UNAVAILABLE} ({missing}): {what} outside the model folders selected by the import graph and the core set"


def load_footprints(path: Path | str) -> dict[str, frozenset[str]]:
    """Cell id → its footprint, from main's baseline.json (or a folder holding one); none from a version-2 file."""
    path = Path(path)
    if path.is_dir():
        path = path / STATE_FILE
    try:
        data = json.loads(read_text(path))
    except (OSError, ValueError, RecursionError) as exc:
        raise FootprintsError(
            f"{path}: cannot read main's baseline ({exc}); pass the baseline.json of `export-bot github baseline`"
        ) from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        raise FootprintsError(
            f"{path}: not an export-bot baseline; pass the baseline.json of `export-bot github baseline`"
        )
    measured = data.get("measured")
    try:
        found = read_tables(data, len(measured) if isinstance(measured, list) else 0)
    except FootprintError as exc:
        raise FootprintsError(f"{path}: footprints: {exc}; delete the artifact so the next merge starts anew") from None
    return {cell: functions for cell, (_, functions) in found.items()}
