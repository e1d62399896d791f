"""Lint a skiplist file (docs/skiplists.md): text in, `file:line:column` findings out; no I/O, no torch."""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache

from bot.cells import BACKENDS, TARGETS, cells_for
from bot.scopes import ScopeWalk, exactness_scopes, known_scopes, onnx_optimize_scopes, skip_scopes, walk_rank
from bot.skiplist.layout import EntrySpan, LayoutError, TableSpan, check_syntax, scan
from bot.skiplist.model import EXPORT_SKIPS, ONNX_DISABLE_OPTIMIZE, referenced_class

# A note says what lint sees and is no problem: `--strict` fails on warnings, never on notes.
ERROR, WARNING, NOTE = "error", "warning", "note"
TYPO_CUTOFF = 0.85  # how close an unknown class name must be to a known one to read as its typo
_TOML_TYPES = {"dict": "a table", "list": "an array", "int": "a number", "float": "a number", "bool": "a boolean"}


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    column: int
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"


@dataclass(frozen=True)
class LintResult:
    file: str
    findings: tuple[Finding, ...]
    entries: int = 0
    scopes: int = 0

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == ERROR)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == WARNING)

    @property
    def notes(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == NOTE)

    def summary(self) -> str:
        counts = f"{_count(self.entries, 'entry', 'entries')} in {_count(self.scopes, 'scope', 'scopes')}"
        found = ((self.errors, "error"), (self.warnings, "warning"), (self.notes, "note"))
        problems = [_count(len(x), label, label + "s") for x, label in found if x]
        return f"{self.file}: {counts}" + (f" ({', '.join(problems)})" if problems else "")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def is_toggle_file(name: str) -> bool:
    """The ONNX optimize toggle shares the file shape but walks only `all` and `dynamic`."""
    return name.replace("\\", "/").rsplit("/", 1)[-1] == ONNX_DISABLE_OPTIMIZE


def lint_text(
    text: str,
    name: str,
    *,
    known_classes: Collection[str] | None = None,
    toggles: bool | None = None,
    walk: ScopeWalk | None = None,
) -> LintResult:
    """Every finding for one file, its scopes checked against `walk` (None: the bot's own).

    `known_classes=None` skips the installed-Transformers check.
    """
    toggles = is_toggle_file(name) if toggles is None else toggles
    try:
        layout = scan(text)
    except LayoutError as exc:
        return LintResult(name, (Finding(name, exc.line, exc.column, ERROR, f"TOML syntax error: {exc.message}"),))
    findings: list[Finding] = []

    def report(line: int, column: int, severity: str, message: str) -> None:
        findings.append(Finding(name, line, column, severity, message))

    for entry in layout.root.entries:
        report(
            entry.line,
            entry.key_column,
            ERROR,
            f"`{entry.name}` is neither a reason nor a scope table: put entries under a `[scope]` table",
        )
    scopes: dict[str, dict[str, EntrySpan]] = {}
    headers: dict[str, int] = {}
    for table in layout.tables:
        if table.array:
            report(
                table.header + 1,
                1,
                ERROR,
                f"`[[{table.scope}]]` is neither a reason nor a scope table: use `[{table.scope}]`",
            )
            continue
        if table.scope in headers:
            report(
                table.header + 1,
                1,
                ERROR,
                f"scope table `{table.scope}` declared twice (first at line {headers[table.scope]}); merge them",
            )
            continue
        headers[table.scope] = table.header + 1
        scopes[table.scope] = _entries(table, report, names=_holds_names(name))
    if not any(f.severity == ERROR for f in findings):
        # Anything tomllib still refuses (a key redefined as a table, …) is a syntax error.
        error = check_syntax(text)
        if error:
            report(error.line, error.column, ERROR, f"TOML syntax error: {error.message}")
    _warnings(scopes, headers, toggles, known_classes, walk, report)
    findings.sort(key=lambda f: (f.line, f.column))
    return LintResult(name, tuple(findings), sum(len(e) for e in scopes.values()), len(scopes))


def _holds_names(name: str) -> bool:
    """A table other than the two docs/skiplists.md names may map a class to names (`skiplist import`'s arrays)."""
    return name.replace("\\", "/").rsplit("/", 1)[-1] not in (EXPORT_SKIPS, ONNX_DISABLE_OPTIMIZE)


def _entries(table: TableSpan, report, *, names: bool = False) -> dict[str, EntrySpan]:
    entries: dict[str, EntrySpan] = {}
    for entry in table.entries:
        where = f"`{entry.name}` in `{table.scope}`"
        if entry.name in entries:
            first = entries[entry.name].line
            report(
                entry.line, entry.key_column, ERROR, f"duplicate class {where} (first at line {first}); keep one entry"
            )
            continue
        if names and isinstance(entry.value, list) and entry.value and all(isinstance(n, str) for n in entry.value):
            pass  # names fed to an exporter config: the comment above says why
        elif not isinstance(entry.value, str):
            kind = _TOML_TYPES.get(type(entry.value).__name__, "date or time")
            report(entry.line, entry.value_column, ERROR, f"the reason of {where} must be a string, not {kind}")
        elif not entry.value.strip():
            report(entry.line, entry.value_column, ERROR, f"empty reason for {where}: say why the cells are skipped")
        entries[entry.name] = entry
    return entries


def _warnings(scopes, headers, toggles: bool, known_classes, walk: ScopeWalk | None, report) -> None:
    known = _toggle_coverage() if toggles else _coverage(walk)
    for scope, line in headers.items():
        if scope not in known:
            report(line, 2, WARNING, f"unknown scope `{scope}`: {_unreached(toggles, walk)}; check the spelling")
    in_file = {c for entries in scopes.values() for c in entries}
    for scope, entries in scopes.items():
        for model_class, entry in entries.items():
            broader = _covering_scope(scope, model_class, scopes, known, walk)
            if broader:
                _redundant(model_class, scope, entry, broader, scopes[broader][model_class], report)
            _reference_and_class_warnings(model_class, entry, in_file, known_classes, report)


def _redundant(model_class: str, scope: str, entry: EntrySpan, broader: str, wider: EntrySpan, report) -> None:
    """An entry a broader one covers: a warning when it says nothing more, a note when it records a cause of its own.

    Upstream keeps two such entries on purpose: each names a second cause of the same cells, the
    one that shows once the broader entry is fixed and removed. Its reason is its own, so lint says
    so and leaves it (the tables stay verbatim: docs/skiplists.md).
    """
    where = f"`{model_class}` in `{scope}`"
    covered = f"`{broader}` (line {wider.line}) already covers all its cells"
    if isinstance(entry.value, str) and entry.value.strip() != str(wider.value).strip():
        message = f"{where} is shadowed: {covered}; its own reason applies once that entry goes"
        report(entry.line, entry.key_column, NOTE, message)
    else:
        report(entry.line, entry.key_column, WARNING, f"{where} is redundant: {covered}, for the same reason")


def _unreached(toggles: bool, walk: ScopeWalk | None) -> str:
    if toggles:
        return "the ONNX optimize toggle walks only `all` and `dynamic`"
    if walk is not None:
        return f"the walk of {walk.name.removeprefix('checkout:')} never visits it"
    return "no cell's walk reaches it"


def _reference_and_class_warnings(model_class: str, entry: EntrySpan, in_file, known_classes, report) -> None:
    target = referenced_class(entry.value) if isinstance(entry.value, str) else None
    if target and target not in in_file:
        report(
            entry.line,
            entry.value_column,
            WARNING,
            f"the reason of `{model_class}` refers to "
            f"`{target}`, which is in no scope of this file; inline its explanation",
        )
    if known_classes is not None and model_class not in known_classes:
        _unknown_class(model_class, entry, known_classes, report)


def _unknown_class(model_class: str, entry: EntrySpan, known_classes: Collection[str], report) -> None:
    """A name the installed Transformers does not define: its typo when one known name is that close, else a note.

    Skiplists track Transformers' main, so they may name a class of a newer version than the one
    installed (upstream's tables name two Hubert heads 5.23.0 does not have): said, never a failure.
    """
    missing = f"`{model_class}` is not a model class of the installed Transformers (no modeling module exports it)"
    close = difflib.get_close_matches(model_class, list(known_classes), n=1, cutoff=TYPO_CUTOFF)
    if close:
        report(entry.line, entry.key_column, WARNING, f"{missing}; did you mean `{close[0]}`?")
    else:
        report(entry.line, entry.key_column, NOTE, f"{missing}: a class of another version?")


def _covering_scope(scope: str, model_class: str, scopes, coverage, walk: ScopeWalk | None) -> str | None:
    if scope not in coverage:
        return None
    cells = coverage[scope]
    for other, entries in scopes.items():
        if other == scope or model_class not in entries or other not in coverage:
            continue
        if _is_exactness(other) and not _is_exactness(scope):
            continue  # an exactness entry never skips, so it covers no skip entry
        wider = coverage[other]
        if cells <= wider and (cells != wider or walk_rank(other, walk) < walk_rank(scope, walk)):
            return other
    return None


def _is_exactness(scope: str) -> bool:
    return scope == "exactness" or scope.endswith(".exactness")


def _all_cells():
    return list(cells_for("_", generative=True, backends=BACKENDS, targets=TARGETS))


@lru_cache(maxsize=4)
def _coverage(walk: ScopeWalk | None) -> dict[str, frozenset]:
    """scope → the cells (of a class with every path) whose skip or exactness walk reaches it.

    `walk` is the walk that applies (bot/scopes.py) and keys the cache: the checkout's, or None for the seed's.
    """
    covered: dict[str, set] = {scope: set() for scope in known_scopes(walk)}
    for cell in _all_cells():
        for scope in [*skip_scopes(cell, walk), *(exactness_scopes(cell, walk) or ())]:
            covered.setdefault(scope, set()).add(cell)
    return {scope: frozenset(cells) for scope, cells in covered.items()}


@lru_cache(maxsize=1)
def _toggle_coverage() -> dict[str, frozenset]:
    covered: dict[str, set] = {}
    for cell in _all_cells():
        for scope in onnx_optimize_scopes(cell) or ():
            covered.setdefault(scope, set()).add(cell)
    return {scope: frozenset(cells) for scope, cells in covered.items()}
