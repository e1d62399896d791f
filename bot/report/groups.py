"""How a failure group's cells are described in the comment: the classes and kinds of cells it spans.

The same groups as bot/diff/groups.py, seen from the report stage: that module forms them, this one
describes their cells.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot import registry
from bot.cells import BACKENDS, Cell, CellIdError, placed

EXTENT_CLAUSES = 3  # clauses an extent names; a scattered group says how many classes the rest are


def extent(cell_ids: Iterable[str]) -> str:
    """`12 classes × dynamo static, dynamic; onnx dynamic · 1 class × executorch (xnnpack) static`: classes and cell kinds.

    Classes that failed in the same kinds of cells share one clause, the largest clause first.
    """
    return _extent(tuple(cell_ids))


@registry.cached(maxsize=1024)  # the comment tries several budgets, each naming every group's extent
def _extent(cell_ids: tuple[str, ...]) -> str:
    kinds: dict[str, set[tuple]] = {}
    for cell_id in cell_ids:
        try:
            cell = Cell.parse(cell_id, lenient=True)
        except CellIdError:
            continue
        kinds.setdefault(cell.model_class, set()).add(_kind(cell))
    clauses: dict[frozenset, int] = {}
    for found in kinds.values():
        key = frozenset(found)
        clauses[key] = clauses.get(key, 0) + 1
    ordered = sorted(clauses.items(), key=lambda item: (-item[1], _describe(item[0])))
    text = " · ".join(f"{_classes(count)} × {_describe(k)}" for k, count in ordered[:EXTENT_CLAUSES])
    rest = sum(count for _, count in ordered[EXTENT_CLAUSES:])
    return text + (f" · {rest:,} more {'class' if rest == 1 else 'classes'} in other kinds of cells" if rest else "")


def _classes(count: int) -> str:
    return f"{count:,} {'class' if count == 1 else 'classes'}"


def _kind(cell: Cell) -> tuple:
    variant = " ".join(
        part
        for part in ("generate" if cell.generate else "", cell.shape, "static cache" if cell.static_cache else "")
        if part
    )
    if not placed(cell):  # after the bot's own backends, named by the test's own word (or its whole name)
        return (len(BACKENDS), cell.backend or cell.test, cell.target or "", variant)
    # By its name, as the comment's table, the skip scopes and `--backends` spell it: one name per backend.
    return (BACKENDS.index(cell.backend), cell.backend, cell.target or "", variant)


def _describe(kinds: frozenset) -> str:
    by_backend: dict[tuple, list[str]] = {}
    for _, name, target, variant in sorted(
        kinds, key=lambda k: (k[0], k[1], k[2], "generate" in k[3], k[3] != "static")
    ):
        by_backend.setdefault((name, target), []).append(variant)
    parts = []
    for (name, target), variants in by_backend.items():
        label = name + (f" ({target})" if target else "")
        parts.append(f"{label} {', '.join(v for v in variants if v)}".rstrip())
    return "; ".join(parts)
