"""The selection file: how the select job hands its cells to the `export-bot run --shard I/N` jobs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.errors import BotError

SCHEMA = 1


class SelectionFileError(BotError, ValueError):
    """A selection file that cannot be read; the message names the file and what is wrong."""


def write_selection(path: Path | str, cells: Iterable[Cell], **extra) -> None:
    """Write `{"schema": 1, "cells": [ids…], …extra}`; `export-bot select --json` writes the full selection this way."""
    document = {"schema": SCHEMA, **extra, "cells": [c.id for c in cells]}
    Path(path).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def read_selection(path: Path | str) -> list[Cell]:
    """The cells of a selection file, in file order; every id is checked."""
    return read_selection_document(path)[0]


def read_selection_document(path: Path | str) -> tuple[list[Cell], dict]:
    """The checked cells and the whole document (summary, reasons, matrix) of a selection file."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SelectionFileError(
            f"{path}: no such selection file; write it with `export-bot select --json {path}`"
        ) from None
    except json.JSONDecodeError as exc:
        raise SelectionFileError(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise SelectionFileError(f"{path}: expected an object with a `cells` list of cell ids")
    cells = []
    for i, cell_id in enumerate(document["cells"]):
        try:
            cells.append(Cell.parse(cell_id))
        except (CellIdError, AttributeError) as exc:
            raise SelectionFileError(f"{path}: cells[{i}]: {exc}") from None
    return cells, document


def changed_lines_of(document: dict, path: Path | str = "selection.json") -> dict[str, tuple[tuple[int, int], ...]]:
    """The `changed_lines` of a selection document (the PR's hunks, head side); empty when it has none."""
    found = document.get("changed_lines") or {}
    try:
        return {str(name): tuple((int(a), int(b)) for a, b in ranges) for name, ranges in found.items()}
    except (AttributeError, TypeError, ValueError):
        raise SelectionFileError(
            f"{path}: `changed_lines` must map paths to [start, end] line ranges; rewrite it with `export-bot select`"
        ) from None
