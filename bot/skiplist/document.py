"""Style-preserving edits of skiplist TOML files; the only module that imports tomlkit.

Edits splice whole lines located by `layout.scan` rather than going through tomlkit's
containers: tomlkit files the comment above a table under the previous table, so an entry
appended through it lands below the next scope's comment. tomlkit still writes every new
line (keys and strings escaped its way) and re-parses every result, so an edit can never
leave a broken file behind, and every byte outside the edited entries stays as it was.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import tomlkit

from bot import registry
from bot import toml as tomllib
from bot.files import read_text, write_bytes
from bot.scopes import ScopeWalk, walk_rank
from bot.skiplist.layout import EntrySpan, Layout, TableSpan, scan
from bot.skiplist.model import SkiplistError, referenced_class, retarget_reference, scopes_from_toml

logger = logging.getLogger(__name__)


def format_header(scope: str) -> str:
    """`[all]`, `["onnx.dynamic"]`: a scope's table header, quoted when the name has a dot."""
    return f"[{tomlkit.key(scope).as_string()}]"


def format_entry(model_class: str, reason: str) -> str:
    """`ModelClass = "reason"` on one line, escaped as a TOML basic string."""
    return f"{tomlkit.key(model_class).as_string()} = {tomlkit.string(reason).as_string()}"


def format_names(model_class: str, names: tuple[str, ...]) -> str:
    """`ModelClass = ["A", "B"]`: a table whose values are names (partitioner configs), not reasons."""
    return f"{tomlkit.key(model_class).as_string()} = {tomlkit.item(list(names)).as_string()}"


_BACKEND_WORDS = registry.DerivedDict(
    lambda declared: {
        **{backend.name: backend.described for backend in declared},
        **{target: described for backend in declared for target, described in backend.targets},
    }
)
_VARIANT_WORDS = {
    "generate": "generate path only",
    "dynamic": "dynamic-shape only",
    "static": "static-shape only",
    "static-cache": "static-cache generate variants only",
}


def describe_scope(scope: str) -> str:
    """The comment written above a new scope table, in the seed's words (`ONNX, dynamic-shape only.`)."""
    parts = scope.split(".")
    exactness = parts[-1] == "exactness"
    if exactness:
        parts = parts[:-1]
    head = _BACKEND_WORDS.get(parts[0]) if parts else None
    rest = parts[1:] if head else parts
    if parts in ([], ["all"]):
        head, rest = "Every backend", []
    elif head is None and all(p in _VARIANT_WORDS for p in parts):
        head = "Every backend"
    if head is None or any(p not in _VARIANT_WORDS for p in rest):
        text = f"Scope `{scope}`."
    else:
        text = f"{head}, {', '.join(_VARIANT_WORDS[p] for p in rest) or 'every variant'}."
    if exactness:
        text += " Exported and run as usual, but not compared against eager."
    return text


class SkiplistDocument:
    """One skiplist file as text, with edits that touch only the lines of the entries they change."""

    def __init__(self, text: str, name: str, walk: ScopeWalk | None = None) -> None:
        self.name = name
        self._walk = walk  # places a new table where it falls in the walk that applies (None: the bot's own)
        self._text, self._scopes, self._layout = text, *_read(text, name)

    @classmethod
    def load(cls, path: Path) -> SkiplistDocument:
        # bot.files.read_text reads bytes: universal newlines would turn CRLF files into LF ones on save.
        return cls(read_text(path), str(path))

    @classmethod
    def parse(cls, text: str, name: str, walk: ScopeWalk | None = None) -> SkiplistDocument:
        return cls(text, name, walk)

    def text(self) -> str:
        return self._text

    def scopes(self) -> dict[str, dict[str, str]]:
        """scope → model class → reason, in the author's order."""
        return {scope: dict(table) for scope, table in self._scopes.items()}

    def save(self, path: Path) -> None:
        """Write atomically (bot/files.py): never half-written, the folder made, the mode kept."""
        write_bytes(path, self._text.encode("utf-8"))

    # ── edits ──────────────────────────────────────────────────────────────────────

    def add(self, scope: str, model_class: str, reason: str) -> None:
        """Add an entry at the end of its table, or right after the `Same … as` chain it references.

        A missing scope table is created where the scope falls in the walk. An entry already
        present is left alone: reasons are never rewritten.
        """
        if not reason.strip():
            raise SkiplistError(f"{self.name}: refusing to add {model_class} to {scope!r} without a reason")
        current = self._scopes.get(scope, {}).get(model_class)
        if current is not None:
            if current != reason:
                logger.info("%s: %s is already in %r with its own reason; kept", self.name, model_class, scope)
            return
        table = self._table(scope)
        if table is None:
            self._insert_table(scope)
            table = self._table(scope)
            assert table is not None
        line, _ = self._insertion_line(table, reason)
        self._splice(line, line, [format_entry(model_class, reason)])

    def add_many(self, entries: Sequence[tuple[str, str, str]]) -> None:
        """`add` for each (scope, model class, reason) in order, re-reading the file once per batch, not per entry.

        The text is the one the adds in sequence would give. An entry's place depends only on the
        entries of its table and the `Same … as` chain its reason names; so a batch is cut before an
        entry that names a class the batch itself added to that table, and entries landing on the
        same line keep their order.
        """
        batch: list[tuple[str, str, str]] = []
        batched: set[tuple[str, str]] = set()
        for scope, model_class, reason in entries:
            if not reason.strip():
                raise SkiplistError(f"{self.name}: refusing to add {model_class} to {scope!r} without a reason")
            if (scope, referenced_class(reason)) in batched:
                self._add_batch(batch)
                batch, batched = [], set()
            if (scope, model_class) not in batched and model_class not in self._scopes.get(scope, {}):
                batch.append((scope, model_class, reason))
                batched.add((scope, model_class))
        self._add_batch(batch)

    def _add_batch(self, batch: list[tuple[str, str, str]]) -> None:
        """New entries, none naming another of the batch in its table: missing tables first, then one splice."""
        for scope in dict.fromkeys(scope for scope, _, _ in batch):
            if self._table(scope) is None:
                self._insert_table(scope)
        # Per landing line: entries that follow a `Same … as` chain, then entries appended to the table.
        # Both land on one line when the chain ends the table; added one by one, a chain's entry would
        # still go right after its chain, so before any entry appended there earlier in the batch.
        landing: dict[int, tuple[list[str], list[str]]] = {}
        for scope, model_class, reason in batch:
            table = self._table(scope)
            assert table is not None
            line, chained = self._insertion_line(table, reason)
            landing.setdefault(line, ([], []))[0 if chained else 1].append(format_entry(model_class, reason))
        if landing:
            self._edit({line: (line, chains + appended) for line, (chains, appended) in landing.items()})

    def remove(self, scope: str, model_class: str) -> None:
        """Remove an entry; its reason moves into the first entry that referred to it.

        The other referrers are pointed at that first one, so no `Same … as` chain dangles
        and no explanation is lost. Emptied tables stay, as the seed keeps empty scopes.
        """
        entry = self._entry(scope, model_class)
        if entry is None:
            return
        reason = self._scopes[scope][model_class]
        referrers = [
            (s, c)
            for s, c, r in self._entries()
            if (s, c) != (scope, model_class) and self._resolve(s, r) == (scope, model_class)
        ]
        self._splice(entry.start, entry.end, [])
        if not referrers:
            return
        (heir_scope, heir), *others = referrers
        heir_reason = self._scopes[heir_scope][heir]
        self._replace(heir_scope, heir, f"{reason} [was: {heir_reason}]")
        for other_scope, other in others:
            self._replace(other_scope, other, retarget_reference(self._scopes[other_scope][other], heir))

    def narrow(self, scope: str, model_class: str, new_scopes: list[str]) -> None:
        """Replace `scope` by `new_scopes` for one class, keeping its reason."""
        reason = self._scopes.get(scope, {}).get(model_class)
        if reason is None or list(new_scopes) == [scope]:
            return
        for new_scope in new_scopes:
            if new_scope != scope:
                self.add(new_scope, model_class, reason)
        if scope not in new_scopes:
            self.remove(scope, model_class)

    # ── helpers ────────────────────────────────────────────────────────────────────

    def _entries(self) -> list[tuple[str, str, str]]:
        return [(s, c, r) for s, table in self._scopes.items() for c, r in table.items()]

    def _resolve(self, scope: str, reason: str) -> tuple[str, str] | None:
        """The entry a reason's `Same … as `X`` means: X in the same scope, else X's first scope."""
        target = referenced_class(reason)
        if target is None:
            return None
        if target in self._scopes.get(scope, {}):
            return scope, target
        return next(((s, target) for s, table in self._scopes.items() if target in table), None)

    def _table(self, scope: str) -> TableSpan | None:
        return next((t for t in self._layout.tables if t.scope == scope and not t.array), None)

    def _entry(self, scope: str, model_class: str) -> EntrySpan | None:
        table = self._table(scope)
        return next((e for e in table.entries if e.name == model_class), None) if table else None

    def _insertion_line(self, table: TableSpan, reason: str) -> tuple[int, bool]:
        """Where an entry with `reason` goes: after the chain of the class it names, else at the table's end."""
        target = referenced_class(reason)
        chain_end = None
        for entry in table.entries:
            if entry.name == target:
                chain_end = entry.end
            elif chain_end is not None and isinstance(entry.value, str) and referenced_class(entry.value) == target:
                chain_end = entry.end
            elif chain_end is not None:
                break
        return (chain_end, True) if chain_end is not None else (table.end, False)

    def _insert_table(self, scope: str) -> None:
        """A new `[scope]` table before the first table that comes later in the walk, else at the end."""
        rank = walk_rank(scope, self._walk)
        later = next((t for t in self._layout.tables if walk_rank(t.scope, self._walk) > rank), None)
        block = [f"# {describe_scope(scope)}", format_header(scope)]
        if later is not None:
            self._splice(later.comments_start, later.comments_start, [*block, ""])
            return
        lines = self._layout.lines
        lead = ["", *block] if lines and lines[-1].strip() else block  # an empty file gets the table too
        self._splice(len(lines), len(lines), lead)

    def _replace(self, scope: str, model_class: str, reason: str) -> None:
        entry = self._entry(scope, model_class)
        assert entry is not None
        self._splice(entry.start, entry.end, [format_entry(model_class, reason)])

    def _splice(self, start: int, end: int, new_lines: list[str]) -> None:
        self._edit({start: (end, new_lines)})

    def _edit(self, edits: Mapping[int, tuple[int, list[str]]]) -> None:
        """Replace lines [start, end) by new lines at each start (ranges apart), then re-read once."""
        lines = list(self._layout.lines)
        eol = self._layout.eol
        if lines and len(lines) in edits and not lines[-1].endswith("\n"):
            lines[-1] += eol  # appending after a last line that has no line ending
        for start in sorted(edits, reverse=True):  # bottom up: the places above stay where they were
            end, new_lines = edits[start]
            lines[start:end] = [line + eol for line in new_lines]
        text = "".join(lines)
        # Re-reading validates the result and refreshes the spans for the next edit.
        self._scopes, self._layout = _read(text, self.name)
        self._text = text


def _read(text: str, name: str) -> tuple[dict[str, dict[str, str]], Layout]:
    # Every splice re-reads the file to validate it and refresh the spans. The stdlib's strict
    # parser does that four times faster than tomlkit.parse, which matters for proposals of
    # hundreds of edits; tomlkit still writes every key and string the edits insert.
    try:
        scopes = scopes_from_toml(tomllib.loads(text), name)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line, col = where.groups() if where else ("?", "?")
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise SkiplistError(f"{name}:{line}:{col}: {message}; run `export-bot skiplist lint {name}`") from None
    return scopes, scan(text)
