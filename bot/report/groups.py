"""Failure groups as the report carries them: one cause, its cells, the line it points at, a repro and a hint."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from bot.cells import BACKENDS, Cell, CellIdError

# How a cell's backend is named in a group's "1 class × torch static, dynamic" line (the grid's names).
BACKEND_LABELS = {"dynamo": "torch", "onnx": "onnx", "openvino": "ov", "executorch": "et"}
EXTENT_CLAUSES = 3  # clauses an extent names; a scattered group says how many classes the rest are


@dataclass(frozen=True)
class Culprit:
    """The repository frame a failure points at, as a `path:line` of the checkout under test."""

    path: str  # relative to the repository root: `src/transformers/models/bert/modeling_bert.py`
    line: int
    source: str = ""  # that line's text, as the traceback quotes it
    changed: bool = False  # the line lies inside the pull request's diff hunks
    url: str | None = None  # the line at the head commit, when the repository is known

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "source": self.source, "changed": self.changed, "url": self.url}

    @classmethod
    def from_json(cls, data: Mapping) -> Culprit:
        return cls(data["path"], int(data["line"]), data.get("source", ""), bool(data.get("changed")), data.get("url"))


@dataclass(frozen=True)
class Hint:
    """A one-line hint for a well-known export error, with the upstream page that explains it."""

    id: str
    text: str
    link: str = ""

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text, "link": self.link}

    @classmethod
    def from_json(cls, data: Mapping) -> Hint:
        return cls(data["id"], data.get("text", ""), data.get("link", ""))


@dataclass(frozen=True)
class Group:
    """Newly broken and new failing cells that fail at one stage with one normalized error signature."""

    stage: str  # the failing stage, or the error kind (build, harness, crash, timeout)
    signature: str  # the normalized first line of the error: numbers, paths, addresses, symbols masked
    cells: tuple[str, ...]  # cell ids, sorted; the first is the representative
    excerpt: str = ""  # the representative cell's own message, unnormalized
    culprit: Culprit | None = None  # None: no frame of the repository under test in the traceback
    repro: str = ""  # the command that reproduces the representative cell locally
    hint: Hint | None = None

    @property
    def representative(self) -> str:
        return self.cells[0]

    def to_json(self) -> dict:
        return {
            "stage": self.stage,
            "signature": self.signature,
            "cells": list(self.cells),
            "excerpt": self.excerpt,
            "culprit": self.culprit.to_json() if self.culprit else None,
            "repro": self.repro,
            "hint": self.hint.to_json() if self.hint else None,
        }

    @classmethod
    def from_json(cls, data: Mapping) -> Group:
        culprit, hint = data.get("culprit"), data.get("hint")
        return cls(
            stage=data.get("stage", ""),
            signature=data["signature"],
            cells=tuple(data.get("cells", ())),
            excerpt=data.get("excerpt", ""),
            culprit=Culprit.from_json(culprit) if culprit else None,
            repro=data.get("repro", ""),
            hint=Hint.from_json(hint) if hint else None,
        )


def extent(cell_ids: Iterable[str]) -> str:
    """`12 classes × torch static, dynamic; onnx dynamic · 1 class × et (xnnpack) static`: classes and cell kinds.

    Classes that failed in the same kinds of cells share one clause, the largest clause first.
    """
    return _extent(tuple(cell_ids))


@lru_cache(maxsize=1024)  # the comment tries several budgets, each naming every group's extent
def _extent(cell_ids: tuple[str, ...]) -> str:
    kinds: dict[str, set[tuple]] = {}
    for cell_id in cell_ids:
        try:
            cell = Cell.parse(cell_id)
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
    return (BACKENDS.index(cell.backend), cell.target or "", variant)


def _describe(kinds: frozenset) -> str:
    by_backend: dict[tuple, list[str]] = {}
    for backend, target, variant in sorted(kinds, key=lambda k: (k[0], k[1], "generate" in k[2], k[2] != "static")):
        by_backend.setdefault((backend, target), []).append(variant)
    parts = []
    for (backend, target), variants in by_backend.items():
        label = BACKEND_LABELS[BACKENDS[backend]] + (f" ({target})" if target else "")
        parts.append(f"{label} {', '.join(variants)}")
    return "; ".join(parts)
