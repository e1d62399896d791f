"""Footprints (docs/selection.md, "Footprints"): which functions of the Transformers checkout a cell executed.

The vocabulary the runner, the baseline and selection share: a function is `PATH::QUALNAME`, the
path relative to the checkout (`src/transformers/modeling_layers.py`), the qualified name as the
source nests it (`GradientCheckpointingLayer.__call__`; a nested function `outer.inner`, without
Python's `<locals>`), and `<module>` for code outside every function (class bodies included).
Both sides name functions with `named_functions`, so a name recorded on main's code and a name
found in a pull request's base text agree. Here too: the testcase property that carries one cell's
footprint out of a run, and its bounded, validating reader (JUnit files come from forks too).
"""

from __future__ import annotations

import ast
import base64
import bisect
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MODULE = "<module>"
PROPERTY = "footprint"  # the testcase property: `PATH::f,g;PATH2::h` compressed (see `encode`)
COMPRESSED = "zlib:"
SEPARATOR = "::"
# Bounds of what a reader accepts: far above a real cell (a few hundred functions in a few dozen
# files), far below what would exhaust a runner's memory.
MAX_PROPERTY = 2_000_000  # characters of one testcase's property
MAX_FILES = 5_000  # files in one cell's footprint
MAX_FUNCTIONS = 50_000  # functions in one cell's footprint
MAX_NAME = 300  # characters of a path, and of a qualified name
_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*\.py")
_QUALNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


class FootprintError(ValueError):
    """A footprint the reader refuses: too large, or a path or name it cannot vouch for."""


def function(path: str, qualname: str) -> str:
    return f"{path}{SEPARATOR}{qualname}"


def split(name: str) -> tuple[str, str]:
    """(path, qualname) of `PATH::QUALNAME`."""
    path, _, qualname = name.partition(SEPARATOR)
    return path, qualname


def valid_path(path: str) -> bool:
    return len(path) <= MAX_NAME and bool(_PATH.fullmatch(path)) and ".." not in path.split("/")


def valid_qualname(qualname: str) -> bool:
    return qualname == MODULE or (len(qualname) <= MAX_NAME and bool(_QUALNAME.fullmatch(qualname)))


def valid(name: str) -> bool:
    path, qualname = split(name)
    return valid_path(path) and valid_qualname(qualname)


# --- naming functions in a source text ---------------------------------------------------------


def named_functions(tree: ast.AST) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Every `def` of a module with its qualified name: classes and functions nest with dots; lambdas are their parent's."""
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, prefix = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield child, name
                stack.append((child, f"{name}."))
            else:
                stack.append((child, prefix))


@dataclass(frozen=True)
class Spans:
    """A source text's functions by line: each `def` from its first decorator to its last line, innermost wins."""

    starts: tuple[int, ...]  # sorted
    spans: tuple[tuple[int, int, str], ...]  # (first line, last line, qualname), in the order of `starts`

    def at(self, line: int) -> str:
        """The qualified name of the innermost function holding `line`, else `<module>`."""
        # Spans nest or are disjoint: going back from the last one starting at or before the line,
        # the first that holds it is the innermost.
        for index in range(bisect.bisect_right(self.starts, line) - 1, -1, -1):
            first, last, qualname = self.spans[index]
            if first <= line <= last:
                return qualname
        return MODULE

    def between(self, line: int) -> str:
        """The function a line inserted after `line` lands in: the innermost holding both neighbours, else `<module>`."""
        before, after = self.at(line), self.at(line + 1)
        if before == after:
            return before
        # One neighbour is nested deeper than the other: the shallower one holds both when it is an ancestor.
        for shallow, deep in ((before, after), (after, before)):
            if shallow != MODULE and deep.startswith(shallow + "."):
                return shallow
        return MODULE


def spans(text: str) -> Spans:
    """The functions of a source text by line; SyntaxError for text that is not Python."""
    found = []
    for node, qualname in named_functions(ast.parse(text)):
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        found.append((first, node.end_lineno or node.lineno, qualname))
    found.sort()
    return Spans(tuple(s[0] for s in found), tuple(found))


# --- the testcase property ---------------------------------------------------------------------


def encode(functions: Iterable[str]) -> str:
    """The property value: `spelled` compressed (`zlib:` and base64), a sixth of its length (~6 KB for a BERT cell)."""
    return COMPRESSED + base64.b64encode(zlib.compress(spelled(functions).encode(), 9)).decode("ascii")


def spelled(functions: Iterable[str]) -> str:
    """`PATH::f,g;PATH2::h`: each file once, files and names sorted, so a footprint has one spelling."""
    by_file: dict[str, list[str]] = {}
    for name in functions:
        path, qualname = split(name)
        by_file.setdefault(path, []).append(qualname)
    return ";".join(f"{path}{SEPARATOR}{','.join(sorted(set(names)))}" for path, names in sorted(by_file.items()))


def decode(text: str) -> frozenset[str]:
    """The functions of a property value; FootprintError for anything `encode` would not have written, or too much of it."""
    if not isinstance(text, str) or len(text) > MAX_PROPERTY:
        raise FootprintError(f"a footprint of more than {MAX_PROPERTY:,} characters")
    if text.startswith(COMPRESSED):
        text = _inflated(text[len(COMPRESSED) :])
    if not text:
        return frozenset()
    groups = text.split(";")
    if len(groups) > MAX_FILES:
        raise FootprintError(f"a footprint of more than {MAX_FILES:,} files")
    found: set[str] = set()
    for group in groups:
        path, sep, names = group.partition(SEPARATOR)
        if not sep or not valid_path(path):
            raise FootprintError(f"not a checkout path: {_shown(path)}")
        for qualname in names.split(","):
            if not valid_qualname(qualname):
                raise FootprintError(f"not a qualified name in {path}: {_shown(qualname)}")
            found.add(function(path, qualname))
        if len(found) > MAX_FUNCTIONS:
            raise FootprintError(f"a footprint of more than {MAX_FUNCTIONS:,} functions")
    return frozenset(found)


def _inflated(text: str) -> str:
    """A compressed footprint's text, refusing one that would inflate past MAX_PROPERTY (a zip bomb)."""
    try:
        inflater = zlib.decompressobj()
        data = inflater.decompress(base64.b64decode(text, validate=True), MAX_PROPERTY + 1)
        if len(data) > MAX_PROPERTY or inflater.unconsumed_tail:
            raise FootprintError(f"a footprint that inflates past {MAX_PROPERTY:,} characters")
        return data.decode("ascii")
    except (ValueError, zlib.error) as exc:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise FootprintError(f"a compressed footprint that does not inflate ({exc})") from None


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- the tables of baseline.json (docs/baseline.md) ----------------------------------------------

MAX_TABLE = 1_000_000  # functions, groups, and numbers in one list
MAX_CELLS = 500_000


def tables(footprinted: dict[str, tuple[frozenset[str], int]]) -> dict:
    """Footprints as tables: each function once, each file's set of them once (a group), the groups every cell holds once.

    Cells of one model share their model's groups and nearly every cell the import-time code of the
    library, so a cell keeps a few dozen group numbers rather than hundreds of names.
    """
    names = sorted({name for functions, _ in footprinted.values() for name in functions}, key=split)
    number = {name: i for i, name in enumerate(names)}
    groups: dict[tuple[int, ...], int] = {}
    per_cell = {}
    for cell_id, (functions, at) in footprinted.items():
        by_file: dict[str, list[int]] = {}
        for name in functions:
            by_file.setdefault(split(name)[0], []).append(number[name])
        ids = {groups.setdefault(tuple(sorted(found)), len(groups)) for found in by_file.values()}
        per_cell[cell_id] = (at, ids)
    shared = set.intersection(*(ids for _, ids in per_cell.values())) if per_cell else set()
    return {
        "functions": _by_path(names),
        "groups": [list(group) for group in groups],
        "shared_groups": sorted(shared),
        "footprints": {c: {"at": at, "groups": sorted(ids - shared)} for c, (at, ids) in per_cell.items()},
    }


def read_tables(data: dict, measured: int) -> dict[str, tuple[int, frozenset[str]]]:
    """`tables` read back, checked: cell id → (index into `measured`, functions); FootprintError names the field."""
    if "footprints" not in data:
        return {}  # version 2, or a state without footprints
    names = _names(data.get("functions"))
    groups = [
        _numbers(group, len(names), f"groups[{i}]") for i, group in enumerate(_list(data.get("groups"), "groups"))
    ]
    shared = _numbers(data.get("shared_groups"), len(groups), "shared_groups")
    cells = data["footprints"]
    if not isinstance(cells, dict) or len(cells) > MAX_CELLS:
        raise FootprintError(f"footprints: expected an object of at most {MAX_CELLS:,} cells")
    found = {}
    for cell_id, entry in cells.items():
        where = f"footprints[{_shown(cell_id)}]"
        if not isinstance(entry, dict) or type(entry.get("at")) is not int or not 0 <= entry["at"] < measured:
            raise FootprintError(f"{where}: expected an object with `at`, an index into `measured`, and `groups`")
        ids = _numbers(entry.get("groups"), len(groups), f"{where}.groups")
        functions = frozenset(names[i] for g in (*shared, *ids) for i in groups[g])
        if len(functions) > MAX_FUNCTIONS:
            raise FootprintError(f"{where}: more than {MAX_FUNCTIONS:,} functions")
        found[cell_id] = (entry["at"], functions)
    return found


def _by_path(names: list[str]) -> dict[str, list[str]]:
    """`{path: [qualname, …]}`: each path once; a function's number is its place in this order."""
    grouped: dict[str, list[str]] = {}
    for name in names:
        path, qualname = split(name)
        grouped.setdefault(path, []).append(qualname)
    return grouped


def _names(value: object) -> list[str]:
    """`_by_path` read back, each path and name checked, in the order that numbers them."""
    if not isinstance(value, dict) or len(value) > MAX_TABLE:
        raise FootprintError(f"functions: expected an object of at most {MAX_TABLE:,} paths")
    names: list[str] = []
    for path, qualnames in value.items():
        if not valid_path(path):
            raise FootprintError(f"functions: not a checkout path: {_shown(path)}")
        for qualname in _list(qualnames, f"functions[{_shown(path)}]"):
            if not isinstance(qualname, str) or not valid_qualname(qualname):
                raise FootprintError(f"functions[{_shown(path)}]: not a qualified name: {_shown(str(qualname))}")
            names.append(function(path, qualname))
        if len(names) > MAX_TABLE:
            raise FootprintError(f"functions: more than {MAX_TABLE:,}")
    return names


def _list(value: object, where: str) -> list:
    if not isinstance(value, list) or len(value) > MAX_TABLE:
        raise FootprintError(f"{where}: expected a list of at most {MAX_TABLE:,} entries")
    return value


def _numbers(value: object, size: int, where: str) -> tuple[int, ...]:
    numbers = _list(value, where)
    if any(type(n) is not int or not 0 <= n < size for n in numbers):
        raise FootprintError(f"{where}: expected indices from 0 to {size - 1}")
    return tuple(numbers)
