"""Observed impact (docs/selection.md, "Footprints"): the cells whose footprint recorded on main a change touches.

Main's sweeps record which functions of the checkout each cell executed (bot/run/footprint.py) and
main's baseline.json keeps them (docs/baseline.md). `observed_impact` maps a pull request's changed
lines, in the coordinates of its base, to the functions that hold them (read with `ast` from the base
text, so the commit the footprints were recorded at may differ from the base by any lines) and those
to the cells that executed them. `load_footprints` reads them from baseline.json; both are pure but
for the file read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from bot.errors import BotError
from bot.files import read_text
from bot.footprints import MODULE, FootprintError, read_tables, spans, split

BASELINE_FORMAT = "export-bot-baseline"
STATE_FILE = "baseline.json"


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
