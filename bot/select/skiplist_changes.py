"""Skiplist entries added, removed or moved between two versions of a file, and exactly the cells they cover."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from bot import toml as tomllib
from bot.cells import Cell, cells_for
from bot.scopes import ScopeWalk, exactness_scopes, onnx_optimize_scopes, skip_scopes
from bot.skiplist.model import ONNX_DISABLE_OPTIMIZE, SkiplistError, scopes_from_toml


@dataclass(frozen=True)
class EntryChange:
    """One `model class` line that appeared in or left a scope; `moved` when the class left one scope for another."""

    file: str
    scope: str
    model_class: str
    change: str  # "added" | "removed"
    moved: bool = False

    @property
    def describe(self) -> str:
        return f"{self.file} [{self.scope}] {self.model_class} {self.change}" + (" (moved)" if self.moved else "")


def parse_entries(text: str | None, name: str) -> set[tuple[str, str]]:
    """(scope, model class) pairs of one skiplist version; a missing file has none."""
    if not text:
        return set()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SkiplistError(f"{name}: {exc}; run `export-bot skiplist lint {name}`") from exc
    return {(scope, cls) for scope, table in scopes_from_toml(data, name).items() for cls in table}


def entry_changes(name: str, base_text: str | None, head_text: str | None) -> list[EntryChange]:
    """Compare two versions of skiplist `name` entry by entry (reason edits change no cell, so they do not count)."""
    base, head = parse_entries(base_text, name), parse_entries(head_text, name)
    added, removed = sorted(head - base), sorted(base - head)
    added_classes = {cls for _, cls in added}
    removed_classes = {cls for _, cls in removed}
    return [EntryChange(name, s, c, "added", c in removed_classes) for s, c in added] + [
        EntryChange(name, s, c, "removed", c in added_classes) for s, c in removed
    ]


def covered_cells(change: EntryChange, generative: Callable[[str], bool], walk: ScopeWalk | None = None) -> list[Cell]:
    """The cells whose walk (`walk`; None: the bot's) consults the entry's scope: skip and exactness walks,
    or the ONNX optimize toggle."""
    toggle = PurePosixPath(change.file).name == ONNX_DISABLE_OPTIMIZE
    covered = []
    for cell in cells_for(change.model_class, generative=generative(change.model_class)):
        walked = skip_scopes(cell, walk) + (exactness_scopes(cell, walk) or [])
        walks = (onnx_optimize_scopes(cell) or []) if toggle else walked
        if change.scope in walks:
            covered.append(cell)
    return covered
