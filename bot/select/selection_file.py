"""The selection file: how the select job hands its cells to the `export-bot run --shard I/N` jobs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.errors import BotError
from bot.files import read_text, write_text

SCHEMA = 1


class SelectionFileError(BotError, ValueError):
    """A selection file that cannot be read; the message names the file and what is wrong."""


def write_selection(path: Path | str, cells: Iterable[Cell], **extra) -> None:
    """Write `{"schema": 1, "cells": [ids…], …extra}`; `export-bot select --json` writes the full selection this way."""
    document = {"schema": SCHEMA, **extra, "cells": [c.id for c in cells]}
    write_text(path, json.dumps(document, indent=2) + "\n")


def read_selection(path: Path | str) -> list[Cell]:
    """The cells of a selection file, in file order; every id is checked."""
    return read_selection_document(path)[0]


def read_selection_document(path: Path | str) -> tuple[list[Cell], dict]:
    """The checked cells and the whole document (summary, reasons, matrix) of a selection file.

    The fields the bot reads are checked against schema 1: `cells` (cell ids), `summary`
    (text or null), `probe` (true/false) and `shards` (lists of cell ids). A file without
    `schema` is read as version 1, so a hand-written `{"cells": […]}` works; other fields are
    left to whoever reads them.
    """
    path = Path(path)
    try:
        document = json.loads(read_text(path))
    except FileNotFoundError:
        raise SelectionFileError(
            f"{path}: no such selection file; write it with `export-bot select --json {path}`"
        ) from None
    except json.JSONDecodeError as exc:
        raise SelectionFileError(f"{path}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise SelectionFileError(f"{path}: JSON nested too deeply; write it with `export-bot select --json`") from None
    if not isinstance(document, dict):
        raise SelectionFileError(f"{path}: expected an object with a `cells` list of cell ids")
    schema = document.get("schema", SCHEMA)
    if schema != SCHEMA or isinstance(schema, bool):
        raise SelectionFileError(
            f"{path}: field `schema` is {schema!r}, this export-bot reads {SCHEMA}; "
            "write it again with this version's `export-bot select --json`"
        )
    cells = _cells(path, "cells", document.get("cells"))
    for key, types, expected in (("summary", (str, type(None)), "a string or null"), ("probe", bool, "true or false")):
        if key in document and not isinstance(document[key], types):
            raise SelectionFileError(f"{path}: field `{key}` must be {expected}, not {_kind(document[key])}")
    shards = document.get("shards", [])
    if not isinstance(shards, list):
        raise SelectionFileError(f"{path}: field `shards` must be a list of lists of cell ids, not {_kind(shards)}")
    for i, shard in enumerate(shards):
        # The shard jobs re-split `cells` themselves; these lists are for people and workflows.
        if not isinstance(shard, list) or not all(isinstance(cell_id, str) for cell_id in shard):
            raise SelectionFileError(f"{path}: field `shards[{i}]` must be a list of cell id strings")
    return cells, document


def _cells(path: Path, field: str, ids: object) -> list[Cell]:
    if not isinstance(ids, list):
        raise SelectionFileError(f"{path}: field `{field}` must be a list of cell ids, not {_kind(ids)}")
    cells = []
    for i, cell_id in enumerate(ids):
        if not isinstance(cell_id, str):
            raise SelectionFileError(f"{path}: field `{field}[{i}]` must be a cell id string, not {_kind(cell_id)}")
        try:
            cells.append(Cell.parse(cell_id))
        except CellIdError as exc:
            raise SelectionFileError(f"{path}: field `{field}[{i}]`: {exc}") from None
    return cells


def _kind(value: object) -> str:
    names = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return "null (or missing)" if value is None else names.get(type(value), type(value).__name__)


def changed_lines_of(document: dict, path: Path | str = "selection.json") -> dict[str, tuple[tuple[int, int], ...]]:
    """The `changed_lines` of a selection document (the PR's hunks, head side); empty when it has none."""
    found = document.get("changed_lines") or {}
    try:
        return {str(name): tuple((int(a), int(b)) for a, b in ranges) for name, ranges in found.items()}
    except (AttributeError, TypeError, ValueError):
        raise SelectionFileError(
            f"{path}: `changed_lines` must map paths to [start, end] line ranges; rewrite it with `export-bot select`"
        ) from None
