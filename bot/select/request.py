"""`/export-check` requests that name their own cells (models, full, failed) instead of the PR's git selection."""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.cells import BACKENDS, SHAPES, Cell, CellIdError, cells_for
from bot.errors import BotError
from bot.models.index import ModelIndex
from bot.select.catalog import Catalog

# The kinds of request that start a run: their one list, which the `/export-check` parser extends with
# the kinds it answers itself.
RUN_KINDS = ("rerun", "models", "full", "probe", "failed")
# The kinds whose selection covers the PR's own (the PR's selection again, or every cell): only
# their verdict may stand as the required `export-conformance` status. `models`, `failed` and
# `probe` look at a part; a green part must not turn a broken PR green (docs/github.md).
GATE_KINDS = ("rerun", "full")
# A `failed` request's bounds: `export-bot github command` sends at most 100 ids, each at most 200
# characters; these only keep a hand-written `--request` from being read without limit.
MAX_CELLS = 1_000
MAX_CELL_ID = 200


class RequestError(BotError, ValueError):
    """A request JSON the select step cannot use; says what is wrong."""


@dataclass(frozen=True)
class RunRequest:
    """The parts of a parsed `/export-check` request that decide which cells run and how."""

    kind: str = "rerun"  # one of RUN_KINDS (apply and help never reach a run)
    models: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    generate: bool = False
    cells: tuple[Cell, ...] = ()  # a `failed` request's cells, parsed from their ids

    @property
    def probe(self) -> bool:
        return self.kind == "probe"

    @property
    def uses_git(self) -> bool:
        """Plain `/export-check` and `probe` rerun the PR's own selection."""
        return self.kind in ("rerun", "probe")


def parse_request(text: str | None) -> RunRequest:
    """Read the request JSON `export-bot github command` wrote; empty means the PR's own selection."""
    if not text or not text.strip() or text.strip() == "{}":
        return RunRequest()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestError(f"--request is not JSON ({exc}); pass what `export-bot github command` wrote") from None
    if not isinstance(data, dict) or data.get("kind") not in RUN_KINDS:
        raise RequestError(f"--request kind {data.get('kind') if isinstance(data, dict) else data!r} names no run")
    lists = {}
    for key in ("models", "backends", "shapes", "cells"):
        value = data.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RequestError(f"--request {key} must be a list of names; pass what `export-bot github command` wrote")
        lists[key] = tuple(value)
    ids = lists.pop("cells")
    cells = _cells(ids) if data["kind"] == "failed" else ()
    return RunRequest(kind=data["kind"], **lists, generate=data.get("generate") is True, cells=cells)


def _cells(ids: tuple[str, ...]) -> tuple[Cell, ...]:
    """A `failed` request's cell ids, each one a cell's: the ids came from a report a PR's code wrote."""
    if not ids or len(ids) > MAX_CELLS:
        raise RequestError(
            f"--request cells must list 1 to {MAX_CELLS:,} cell ids, not {len(ids):,}; "
            "pass what `export-bot github command` wrote"
        )
    cells = []
    for i, cell_id in enumerate(ids):
        try:
            if len(cell_id) > MAX_CELL_ID:
                raise CellIdError(f"{len(cell_id):,} characters (a cell id has at most {MAX_CELL_ID})")
            cells.append(Cell.parse(cell_id))
        except CellIdError as exc:
            raise RequestError(f"--request cells[{i}] is not a cell id: {exc}") from None
    return tuple(dict.fromkeys(cells))


def request_cells(request: RunRequest, catalog: Catalog, index: ModelIndex) -> list[Cell]:
    """The cells of a `models`, `full` or `failed` request (pure)."""
    if request.kind == "failed":
        return list(request.cells)
    if request.kind == "full":
        classes = sorted(catalog.buildable if catalog.buildable is not None else index.classes)
        return [c for name in classes for c in cells_for(name, generative=catalog.is_generative(name))]
    if request.kind != "models":
        raise RequestError(f"a {request.kind!r} request runs the PR's own selection, not named cells")
    classes: list[str] = []
    for name in request.models:
        # A model type (`llama`) stands for every class its modeling module exports.
        classes += index.classes_by_type.get(name, (name,))
    backends = request.backends or BACKENDS
    shapes = request.shapes or SHAPES
    cells = []
    for name in dict.fromkeys(classes):
        generative = request.generate and catalog.is_generative(name)
        cells += [c for c in cells_for(name, generative=generative, backends=backends, shapes=shapes)]
    return cells
