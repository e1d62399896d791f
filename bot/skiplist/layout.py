"""Where each scope table and entry sits in a skiplist file (line spans), for lint positions and line-exact edits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot import toml as tomllib
from bot.errors import BotError


class LayoutError(BotError, ValueError):
    """The text is not TOML; `line` and `column` are 1-based, as tomllib reports them."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@dataclass(frozen=True)
class EntrySpan:
    """One `key = value` item: lines [start, end) (0-based), 1-based columns of its key and value."""

    name: str
    value: Any
    start: int
    end: int
    key_column: int
    value_column: int

    @property
    def line(self) -> int:
        return self.start + 1


@dataclass(frozen=True)
class TableSpan:
    """A `[scope]` table (header -1 for the root, before any header) and the entries under it."""

    scope: str
    header: int
    entries: tuple[EntrySpan, ...]
    comments_start: int  # first line of the comment block right above the header
    array: bool = False  # `[[scope]]`: an array of tables, never a scope

    @property
    def end(self) -> int:
        """The line after the table's last entry (after the header when it has none)."""
        return self.entries[-1].end if self.entries else self.header + 1


@dataclass(frozen=True)
class Layout:
    lines: tuple[str, ...]
    root: TableSpan
    tables: tuple[TableSpan, ...]

    @property
    def eol(self) -> str:
        """The file's own line ending, used for every line an edit adds."""
        return "\r\n" if self.lines and self.lines[0].endswith("\r\n") else "\n"


_LINES = re.compile(r"(?<=\n)")


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept; only `\\n` ends a line (TOML's rule, unlike str.splitlines)."""
    return [line for line in _LINES.split(text) if line]


def scan(text: str) -> Layout:
    """Locate tables and entries. Each item is parsed on its own, so duplicates do not stop the scan.

    tomllib gives no positions, and tomlkit attaches the comment above a table to the end of
    the previous one; a line scan that lets tomllib judge each item's extent gives both exactly.
    """
    lines = split_lines(text)
    spans: list[TableSpan] = []
    scope, header, array, entries = "", -1, False, []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
        elif stripped.startswith("["):
            spans.append(TableSpan(scope, header, tuple(entries), _comments_start(lines, header), array))
            array = stripped.startswith("[[")
            scope, header, entries = _header_scope(lines[i], i), i, []
            i += 1
        else:
            end = _item_end(lines, i)
            entries.append(_entry(lines, i, end))
            i = end
    spans.append(TableSpan(scope, header, tuple(entries), _comments_start(lines, header), array))
    return Layout(tuple(lines), spans[0], tuple(spans[1:]))


def _comments_start(lines: list[str], header: int) -> int:
    start = max(header, 0)
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    return start


def _header_scope(line: str, index: int) -> str:
    data = _loads(line, index)
    path = []
    while isinstance(data, dict) and len(data) == 1:
        key, data = next(iter(data.items()))
        path.append(key)
        if isinstance(data, list):  # [[array.of.tables]]
            data = data[-1] if data else {}
    return ".".join(path)


def _item_end(lines: list[str], start: int) -> int:
    """The line after the item starting at `start`: the shortest run of lines that parses."""
    first_error: LayoutError | None = None
    for end in range(start + 1, len(lines) + 1):
        try:
            _loads("".join(lines[start:end]), start)
            return end
        except LayoutError as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise first_error


def _entry(lines: list[str], start: int, end: int) -> EntrySpan:
    line = lines[start]
    equals = _find_equals(line)
    if equals is None:
        raise LayoutError("expected `key = value`", start + 1, len(line) - len(line.lstrip()) + 1)
    # The key's own path: a dotted key nests, an inline-table value does not.
    path_data = _loads(line[:equals] + "= 0\n", start)
    path: list[str] = []
    value: Any = _loads("".join(lines[start:end]), start)
    while isinstance(path_data, dict):
        key, path_data = next(iter(path_data.items()))
        path.append(key)
        value = value[key]
    value_column = equals + 1 + len(line[equals + 1 :]) - len(line[equals + 1 :].lstrip(" \t")) + 1
    key_column = len(line) - len(line.lstrip()) + 1
    return EntrySpan(".".join(path), value, start, end, key_column, value_column)


def _find_equals(line: str) -> int | None:
    quote, escaped = None, False
    for index, char in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "=":
            return index
    return None


def _loads(text: str, first_line: int) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _error(exc, first_line) from None


_AT = re.compile(r"^(?P<message>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)$", re.DOTALL)
_AT_END = re.compile(r"^(?P<message>.*) \(at end of document\)$", re.DOTALL)


def _error(exc: tomllib.TOMLDecodeError, first_line: int) -> LayoutError:
    text = str(exc)
    match = _AT.match(text)
    if match:
        return LayoutError(match["message"], first_line + int(match["line"]), int(match["column"]))
    match = _AT_END.match(text)
    return LayoutError(match["message"] if match else text, first_line + 1, 1)


def check_syntax(text: str) -> LayoutError | None:
    """The first TOML syntax error of the whole text, positioned by tomllib, or None."""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return _error(exc, 0)
    return None
