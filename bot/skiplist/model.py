"""The skiplist model: scopes and entries loaded from TOML, and `explain(cell)` by the scope walk."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from bot import toml as tomllib
from bot.cells import Cell
from bot.errors import BotError
from bot.files import read_text
from bot.scopes import ScopeWalk, exactness_scopes, gate_scopes, onnx_optimize_scopes, skip_scopes

# The two files docs/skiplists.md names: skips (with their exactness scopes) and the ONNX optimize toggle.
EXPORT_SKIPS = "export_skips.toml"
ONNX_DISABLE_OPTIMIZE = "onnx_disable_optimize.toml"
FILES = (EXPORT_SKIPS, ONNX_DISABLE_OPTIMIZE)  # the only files a skiplist folder holds, and a proposal edits

Texts = Mapping[str, str]  # skiplist file name (`export_skips.toml`) → its text


# A reason that starts `Same … as `X`` points at another entry's explanation (docs/skiplists.md).
# Only the first sentence counts: a period outside backticks ends the search.
_REFERENCE = re.compile(r"^Same\b(?:[^.`]|`[^`]*`)*?\bas `(?P<target>[A-Za-z_][A-Za-z0-9_]*)`")


def referenced_class(reason: str) -> str | None:
    """The class a `Same … as `X`` reason refers to, or None."""
    match = _REFERENCE.match(reason)
    return match["target"] if match else None


def retarget_reference(reason: str, new_target: str) -> str:
    """The reason with its `Same … as `X`` reference pointed at `new_target` instead."""
    match = _REFERENCE.match(reason)
    if not match:
        return reason
    return reason[: match.start("target")] + new_target + reason[match.end("target") :]


class SkiplistError(BotError, ValueError):
    """A skiplist that cannot be used; the message names the file and what to fix."""


@dataclass(frozen=True)
class Entry:
    """One `model class = "reason"` line under a scope."""

    file: str
    scope: str
    model_class: str
    reason: str


@dataclass(frozen=True)
class Skiplist:
    """One file: scope → model class → reason, in the author's order."""

    name: str
    scopes: Mapping[str, Mapping[str, str]]

    def entries(self) -> Iterator[Entry]:
        for scope, table in self.scopes.items():
            for model_class, reason in table.items():
                yield Entry(self.name, scope, model_class, reason)

    def first_match(self, model_class: str, scopes: list[str] | None) -> tuple[str, str] | None:
        for scope in scopes or ():
            reason = self.scopes.get(scope, {}).get(model_class)
            if reason is not None:
                return scope, reason
        return None

    def referenced(self, scope: str, reason: str) -> Entry | None:
        """The entry a `Same … as `X`` reason points at: X in the same scope, else X's first scope."""
        target = referenced_class(reason)
        if target is None:
            return None
        for candidate in [scope, *self.scopes]:
            if target in self.scopes.get(candidate, {}):
                return Entry(self.name, candidate, target, self.scopes[candidate][target])
        return None


@dataclass(frozen=True)
class Explanation:
    """What the skiplists say about one cell."""

    cell: Cell
    scope: str | None = None  # the first skip scope that lists the class
    reason: str | None = None
    exactness_scope: str | None = None  # runs, but without the eager comparison
    exactness_reason: str | None = None
    onnx_optimize: bool | None = None  # None for non-ONNX cells
    onnx_optimize_scope: str | None = None  # the ONNX_DISABLE_OPTIMIZE scope that turns it off
    onnx_optimize_reason: str | None = None
    gate_scope: str | None = None  # the export runs; this scope gates its generate drive
    gate_reason: str | None = None

    @property
    def skipped(self) -> bool:
        return self.scope is not None

    def to_json(self) -> dict:
        return {
            "cell": self.cell.id,
            "skipped": self.skipped,
            "scope": self.scope,
            "reason": self.reason,
            "exactness_scope": self.exactness_scope,
            "exactness_reason": self.exactness_reason,
            "onnx_optimize": self.onnx_optimize,
            "onnx_optimize_scope": self.onnx_optimize_scope,
            "onnx_optimize_reason": self.onnx_optimize_reason,
            "gate_scope": self.gate_scope,
            "gate_reason": self.gate_reason,
        }


@dataclass(frozen=True)
class Skiplists:
    """The skip file and the optimize toggle together, as the runner consults them, by the scope walk that applies."""

    skips: Skiplist
    disable_optimize: Skiplist
    walk: ScopeWalk | None = None  # a checkout's own walk (recorded, or read from its module); None: the bot's

    def skipped(self, cell: Cell) -> bool:
        """`explain(cell).skipped` without the rest: a skip scope of the cell's walk lists its class."""
        return self.skips.first_match(cell.model_class, skip_scopes(cell, self.walk)) is not None

    def explain(self, cell: Cell) -> Explanation:
        skip = self.skips.first_match(cell.model_class, skip_scopes(cell, self.walk))
        exact = self.skips.first_match(cell.model_class, exactness_scopes(cell, self.walk))
        toggles = onnx_optimize_scopes(cell)
        toggle = self.disable_optimize.first_match(cell.model_class, toggles)
        gate = None if skip else self.skips.first_match(cell.model_class, gate_scopes(cell, self.walk))
        return Explanation(
            cell,
            scope=skip and skip[0],
            reason=skip and skip[1],
            exactness_scope=exact and exact[0],
            exactness_reason=exact and exact[1],
            onnx_optimize=None if toggles is None else toggle is None,
            onnx_optimize_scope=toggle and toggle[0],
            onnx_optimize_reason=toggle and toggle[1],
            gate_scope=gate and gate[0],
            gate_reason=gate and gate[1],
        )

    def entries(self) -> Iterator[Entry]:
        yield from self.skips.entries()
        yield from self.disable_optimize.entries()


def scopes_from_toml(data: Mapping, name: str, *, names: bool = False) -> dict[str, dict[str, str]]:
    """Flatten parsed TOML into scope → class → reason.

    Accepts quoted flat names (`["onnx.dynamic"]`) and nested tables (`[onnx.dynamic]`)
    alike: a table whose values are all strings is a scope, a table of tables nests.
    With `names`, a value may also be an array of strings (a tuple here): the tables whose
    values are names fed to an exporter config (`EXECUTORCH_PARTITION_EXCLUDE`), not reasons.
    """
    scopes: dict[str, dict[str, str]] = {}

    def visit(prefix: str, table: Mapping) -> None:
        entries = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
        for model_class, reason in entries.items():
            if names and isinstance(reason, list) and all(isinstance(n, str) for n in reason):
                entries[model_class] = tuple(reason)
            elif not isinstance(reason, str):
                raise SkiplistError(
                    f"{name}: the reason of {model_class} in {prefix!r} must be a string, not "
                    f"{type(reason).__name__}; run `export-bot skiplist lint {name}`"
                )
        if entries or not table:
            scopes[prefix] = entries
        for key, value in table.items():
            if isinstance(value, Mapping):
                visit(f"{prefix}.{key}" if prefix else key, value)

    for key, value in data.items():
        if not isinstance(value, Mapping):
            raise SkiplistError(f"{name}: top-level key {key!r} must be a scope table, not a {type(value).__name__}")
        visit(key, value)
    return scopes


def load_skiplist(path: Path, *, names: bool = False) -> Skiplist:
    """One skiplist file (empty when missing); `names` also accepts arrays of names as values (scopes_from_toml)."""
    try:
        data = tomllib.loads(read_text(path))
    except FileNotFoundError:
        return Skiplist(path.name, {})
    except tomllib.TOMLDecodeError as exc:
        raise SkiplistError(f"{path}: {exc}; run `export-bot skiplist lint {path}` for details") from exc
    return Skiplist(path.name, scopes_from_toml(data, str(path), names=names))


def read_texts(folder: Path | str) -> dict[str, str]:
    """The skiplist files of `folder` that exist, as the editor reads them (CRLF kept): the one reader of a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SkiplistError(f"{folder}: no such skiplist folder; pass --skiplists DIR")
    return {name: read_text(folder / name) for name in FILES if (folder / name).is_file()}


def parse_texts(texts: Texts, folder: Path | str = "skiplists", walk: ScopeWalk | None = None) -> Skiplists:
    """The skiplists the texts hold, as a folder's files read, judged by `walk`; a missing file is empty."""
    loaded = []
    for name in FILES:
        where = Path(folder) / name
        try:
            data = tomllib.loads(texts.get(name, ""))
        except tomllib.TOMLDecodeError as exc:
            raise SkiplistError(f"{where}: {exc}; run `export-bot skiplist lint {where}` for details") from exc
        loaded.append(Skiplist(name, scopes_from_toml(data, str(where))))
    return Skiplists(*loaded, walk)


def load_skiplists(directory: Path | str) -> Skiplists:
    """The judgement alone, for a command that never edits the files (read once, by `read_texts`)."""
    return parse_texts(read_texts(directory), directory)


@dataclass(frozen=True)
class LoadedSkiplists:
    """A command's skiplists, read once at its edge and passed to every stage that needs them.

    The diff and the runner judge by `skiplists` (the entries, and the scope walk that applies:
    a checkout's own, recorded or read from its module, else the bot's); the proposal edits `texts`.
    """

    folder: Path
    texts: Texts
    skiplists: Skiplists

    @property
    def walk(self) -> ScopeWalk | None:
        return self.skiplists.walk

    def with_walk(self, walk: ScopeWalk | None) -> LoadedSkiplists:
        """The same files under another walk (known only once the run's results are read)."""
        return replace(self, skiplists=replace(self.skiplists, walk=walk))


def read_skiplists(folder: Path | str, walk: ScopeWalk | None = None) -> LoadedSkiplists:
    """The folder's files read and parsed, once, judged by `walk` (None: the bot's own)."""
    texts = read_texts(folder)
    return LoadedSkiplists(Path(folder), texts, parse_texts(texts, folder, walk))
