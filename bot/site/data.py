"""Nightly reports → the dashboard's compact data: interned strings, one state table, per-run changes (pure)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlsplit

from bot import registry
from bot.cells import BACKENDS, Cell, CellIdError, placed
from bot.diff.model import CellLine, Report
from bot.outcomes import WEAK_COMPARED

SCHEMA = "export-bot/site@1"
# One letter per mark the grid shows; the marks are the PR comment's (docs/reports.md).
CODES = {
    "P": ("passed", "✅"),
    "U": ("passed, not compared", "✅"),
    "W": ("passed on a weak check", "☑️"),
    "F": ("failed", "❌"),
    "X": ("crashed or timed out", "💥"),
    "H": ("harness or build error", "⚠️"),
    "K": ("flaky", "⚠️"),
    "S": ("skipped", "⏭️"),
    "B": ("not buildable by this source", "🚧"),
    "O": ("skiplisted, passed in probe", "🔓"),
    "-": ("not run", "·"),
}
# The pass rate counts cells that ran outside the skiplists: probe runs of skiplisted cells are left out,
# and so are cells the source cannot build (neither passing nor failing, docs/outcomes.md).
PASSING, RAN = frozenset("PUW"), frozenset("PUWFXHK")
# What a weak pass compared, in the comment's words (bot/report/markdown.py `weak_passes`).
COMPARED = WEAK_COMPARED
_LETTER = {"passed": "P", "passed-uncompared": "U", "failed": "F", "skipped": "S", "not-buildable": "B", "missing": "-"}
MISSING = ("-", "missing", "", "", "", "", "", 0, "", "")
# The figures a cell's panel plots over the runs (docs/rules.md), to 3 significant digits, in a file of
# their own (figures.js) that the page loads when a panel first opens: one value per cell, they would
# make the grid's data several times larger. Export seconds move every night: they stay in the
# reports and the drift section.
SITE_FIGURES = ("max_abs_error", "tolerance_ratio", "artifact_bytes", "delegated_nodes")


@dataclass(frozen=True)
class NightlyReport:
    """One nightly report and where it came from."""

    report: Report
    source: str  # the report.json path, named in errors and in the page


def code(line: CellLine, flaky: bool = False) -> str:
    """The grid letter of one cell in one run."""
    status = line.status
    if status in ("missing", "not-buildable"):
        return _LETTER[status]  # not buildable: no verdict, even for a probe run (docs/outcomes.md)
    if line.probe:
        # A skiplisted cell run anyway: passing means the skip may be obsolete, failing that it is still needed.
        return "O" if status.startswith("passed") else "S"
    if flaky:
        return "K"
    if status == "error":
        return "X" if line.kind in ("crash", "timeout") else "H"
    if status == "passed" and line.compared in COMPARED:
        return "W"  # the comment's ☑️: output names or count only, or nothing
    return _LETTER.get(status, "-")


@cache
def column(name: str) -> dict:
    """A testcase name's coordinates and its short label, as the job summary's grid labels columns."""
    cell = Cell.from_testcase("_", name, lenient=True)
    variant = (["gen"] if cell.generate else []) + (["st" if cell.shape == "static" else "dyn"] if cell.shape else [])
    if cell.static_cache:
        variant.append("sc")
    if cell.target:
        variant.append("xnn" if cell.target == "xnnpack" else cell.target)
    return {
        "name": name,
        "backend": cell.backend,
        "abbr": registry.label(cell.backend) if cell.backend else cell.test,
        "variant": " ".join(variant),
        "shape": cell.shape,
        "path": cell.path,
        "cache": cell.cache or "none",
        "target": cell.target or "",
        # A backend the bot does not know (or none) sorts after its own, by name; the bot's own keys are unchanged.
        "key": [cell.path, _rank(cell), cell.target or "", cell.cache or "", cell.shape != "static"]
        + ([] if placed(cell) else [cell.backend, cell.test]),
    }


def _rank(cell: Cell) -> int:
    return BACKENDS.index(cell.backend) if placed(cell) else len(BACKENDS) + (not cell.backend)


class _Interner:
    def __init__(self) -> None:
        self.items: list = []
        self.index: dict = {}

    def __call__(self, item) -> int:
        found = self.index.get(item)
        if found is None:
            found = self.index[item] = len(self.items)
            self.items.append(item)
        return found


def ordered(runs: Sequence[NightlyReport]) -> list[NightlyReport]:
    """Oldest first: by `created` where reports carry it; reports without it keep the given order, first."""
    return sorted(runs, key=lambda run: (run.report.created is not None, run.report.created or ""))


def build_data(
    runs: Sequence[NightlyReport],
    *,
    skip_lines: Mapping[tuple[str, str], tuple[str, int]] | None = None,
    families: Mapping[str, str] | None = None,
    repo_url: str | None = None,
    skiplist_url: str | None = None,
    generated: str | None = None,
) -> dict:
    """The page's data. `skip_lines`: (scope, class) → (file, 1-based line); `families`: fallback class → family."""
    runs = ordered(runs)
    cell_index = _index_cells(runs)
    classes, columns, cell_class, cell_column = _grid(list(cell_index))
    states = _Interner()
    states(MISSING)
    backend_of = [columns[c]["backend"] if c >= 0 else None for c in cell_column]
    encoded_runs, rates = _encode_runs(runs, cell_index, states, backend_of)
    strings = _Interner()
    strings("")
    table = [[s[0], s[1], *(strings(x) for x in s[2:7]), s[7], strings(s[8]), strings(s[9])] for s in states.items]
    family_names, class_family = _families(runs, families, classes)
    links = {
        f"{scope}|{model_class}": [strings(file), line]
        for (scope, model_class), (file, line) in (skip_lines or {}).items()
    }
    return {
        "schema": SCHEMA,
        "generated": generated,
        "repo_url": https_url(repo_url),
        "skiplist_url": https_url(skiplist_url),
        "codes": {letter: list(value) for letter, value in CODES.items()},
        "backends": list(BACKENDS),
        "colours": {backend.name: backend.colour for backend in registry.REGISTRY},
        "columns": [{k: v for k, v in c.items() if k != "key"} for c in columns],
        "classes": classes,
        "families": family_names,
        "class_family": class_family,
        "cell_class": cell_class,
        "cell_column": cell_column,
        "strings": strings.items,
        "states": table,
        "skip_lines": links,
        "runs": encoded_runs,
        "rates": rates,
    }


def _index_cells(runs: Sequence[NightlyReport]) -> dict[str, int]:
    """Every cell id any run holds → its position, in order of first appearance."""
    cell_index: dict[str, int] = {}
    for run in runs:
        for line in run.report.cells:
            cell_index.setdefault(line.cell, len(cell_index))
    return cell_index


def _encode_runs(
    runs: Sequence[NightlyReport], cell_index: Mapping[str, int], states: _Interner, backend_of: list[str | None]
) -> tuple[list[dict], list]:
    """Each run as its changes from the one before (or in full, when shorter), and each run's pass rates."""
    missing = 0
    previous = [missing] * len(cell_index)
    encoded_runs, rates = [], []
    # Nights repeat most lines verbatim: a line (a tuple) maps to its state id once, for all runs.
    state_of: dict = {}
    for run in runs:
        report = run.report
        flaky = {line.cell for line in report.category("flaky")}
        current = [missing] * len(cell_index)
        for line in report.cells:
            key = (line, True) if line.cell in flaky else line
            state = state_of.get(key)
            if state is None:
                state = state_of[key] = states(_state(line, line.cell in flaky))
            current[cell_index[line.cell]] = state
        changes = [x for i, (a, b) in enumerate(zip(previous, current)) if a != b for x in (i, b)]
        entry = _run_meta(report, run.source)
        if len(changes) > len(current):  # a full list is shorter than the pairs
            entry["full"] = current
        else:
            entry["changes"] = changes
        encoded_runs.append(entry)
        rates.append(_rates(current, [s[0] for s in states.items], backend_of))
        previous = current
    return encoded_runs, rates


def _families(
    runs: Sequence[NightlyReport], families: Mapping[str, str] | None, classes: list[str]
) -> tuple[list[str], list[int]]:
    """The family names (sorted) and each class's family index: the reports' own families over the fallback."""
    family_of = dict(families or {})
    for run in runs:
        family_of.update(run.report.families)
    family_names = sorted({family_of.get(c, "unknown") for c in classes})
    return family_names, [family_names.index(family_of.get(c, "unknown")) for c in classes]


def _grid(cell_ids: list[str]) -> tuple[list[str], list[dict], list[int], list[int]]:
    """Rows (model classes, sorted) and columns (variants, in the job summary's order) of every cell."""
    parts = []
    for cell_id in cell_ids:
        model_class, _, name = cell_id.partition("::")
        try:
            column(name)
        except CellIdError:
            name = None  # not a cell: kept out of the grid, but kept in the run's lists
        parts.append((model_class, name))
    classes = sorted({model_class for model_class, _ in parts}, key=_natural)
    columns = sorted((column(n) for n in {n for _, n in parts if n}), key=lambda c: c["key"])
    row = {name: i for i, name in enumerate(classes)}
    col = {c["name"]: i for i, c in enumerate(columns)}
    return classes, columns, [row[m] for m, _ in parts], [col.get(n, -1) if n else -1 for _, n in parts]


def _state(line: CellLine, flaky: bool) -> tuple:
    return (
        code(line, flaky),
        line.status,
        line.stage or "",
        line.kind or "",
        line.message,
        line.skip_scope or "",
        line.exactness_scope or "",
        int(line.probe),
        line.covered_by or "",
        COMPARED.get(line.compared, "") if line.status == "passed" else "",
    )


def _natural(name: str) -> tuple:
    """`Gemma2Model` after `GemmaModel`, `Synth10` after `Synth9`: digits compare as numbers."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name))


def _run_meta(report: Report, source: str) -> dict:
    return {
        "created": report.created,
        "sha": report.head_sha,
        "url": https_url(report.run_url),
        "verdict": report.verdict,
        "headline": report.headline,
        "versions": dict(report.versions),
        "source": source,
    }


def https_url(url: str | None) -> str | None:
    """The URL when it is an https: address with a host; else None (a report's `javascript:` never becomes a link)."""
    if not url or any(c.isspace() or ord(c) < 32 for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket
        return None
    return url if parts.scheme == "https" and parts.netloc else None


def _rates(current: list[int], letters: list[str], backend_of: list[str | None]) -> dict:
    """Per backend: [passing, ran] among the cells that ran outside the skiplists."""
    passing: Counter = Counter()
    ran: Counter = Counter()
    for state, backend in zip(current, backend_of):
        letter = letters[state]
        if backend is not None and letter in RAN:
            ran[backend] += 1
            if letter in PASSING:
                passing[backend] += 1
    return {backend: [passing[backend], ran[backend]] for backend in BACKENDS if ran[backend]}


def build_figures(runs: Sequence[NightlyReport]) -> dict:
    """Per cell (the index data.js gives it), its figures in each run where they changed: `[run, v…]`, null for none.

    A cell's values stay the same night after night until the code changes, so a cell holds a few
    rows, not one per run; the panel carries a row forward to the runs after it.
    """
    runs = ordered(runs)
    cell_index = _index_cells(runs)
    cells: dict[int, list] = {}
    last: dict[int, tuple] = {}
    for r, run in enumerate(runs):
        for line in run.report.cells:
            found = dict(line.figures)
            values = tuple(float(f"{found[n]:.3g}") if n in found else None for n in SITE_FIGURES)
            index = cell_index[line.cell]
            if last.get(index, (None,) * len(SITE_FIGURES)) != values:
                cells.setdefault(index, []).append([r, *values])
                last[index] = values
    return {"schema": SCHEMA, "names": list(SITE_FIGURES), "cells": {str(i): rows for i, rows in cells.items()}}
