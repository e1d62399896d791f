"""baseline.json (docs/baseline.md): the state written and read back, checked at the edge; a version-1 JUnit folder converted."""

from __future__ import annotations

import json
import logging
import math
import re
from datetime import datetime, timezone
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.errors import BotError
from bot.files import read_text
from bot.footprints import FootprintError, read_tables, tables
from bot.outcomes import RESULT_STATUSES, CellResult
from bot.results.baseline import (
    FORMAT,
    KEPT_PROPERTIES,
    MESSAGE_LIMIT,
    SOURCES,
    VERSION,
    Baseline,
    Footprint,
    Measurement,
    Segment,
    fold,
    measured,
    utc,
)
from bot.results.model import ResultSet

log = logging.getLogger(__name__)

STATE_FILE = "baseline.json"
READ_VERSIONS = (2, VERSION)  # version 2 has no footprints
MEASUREMENT_FILE = "measurement.json"
# Bounds of a state the bot could have written: far above main's real size (30,000 cells, a few
# thousand pushes a year), far below what would exhaust a runner's memory.
MAX_CELLS = 500_000
MAX_PER_CELL = 1000  # the largest `baseline-history`
MAX_ITEMS = 1_000_000  # segments' commits, runs, the measured table
MAX_TEXT = 1000
MAX_FILES = 1000  # state and measurement files in one folder
_SHA = re.compile(r"[0-9a-f]{40}")
_TODO = (
    "it is not a baseline export-bot wrote: pass the right file, or delete the artifact so the next merge starts anew"
)


class BaselineError(BotError, ValueError):
    """A baseline file the bot cannot read (another format or version, or damaged); the message says what to do."""


# --- writing ----------------------------------------------------------------------------------


def dumps(baseline: Baseline) -> str:
    """The state as version-3 JSON: each (commit, time, run, source) once in `measured`, cells point into it."""
    table: dict[tuple, int] = {}
    cells = {}
    for cell, ms in sorted(baseline.cells.items()):
        cells[cell.id] = [
            _measurement_json(m, table.setdefault((m.commit, m.time, m.run_id, m.source), len(table))) for m in ms
        ]
    footprinted = {
        cell.id: (f.functions, table.setdefault((f.commit, f.time, f.run_id, f.source), len(table)))
        for cell, f in sorted(baseline.footprints.items())
    }
    document = {
        "format": FORMAT,
        "version": VERSION,
        "runs": sorted(baseline.runs),
        "segments": [{"parent": s.parent, "commits": list(s.commits), "run_id": s.run_id} for s in baseline.segments],
        "full_sweeps": [{"commit": c, "time": t} for c, t in baseline.full_sweeps],
        "due": [{"commit": c, "reason": r} for c, r in baseline.due],
        "measured": [{"commit": c, "time": t, "run_id": r, "source": s} for c, t, r, s in table],
        "cells": cells,
        **tables(footprinted),
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def _measurement_json(m: Measurement, at: int) -> dict:
    r = m.result
    data: dict = {"at": at, "status": r.status.value}
    optional = {"stage": r.stage, "kind": r.kind, "skip_scope": r.skip_scope, "exactness_scope": r.exactness_scope}
    data.update({k: v for k, v in optional.items() if v is not None})
    if r.message:
        data["message"] = r.message
    if r.probe:
        data["probe"] = True
    if r.duration is not None:
        data["duration"] = r.duration
    if r.components:
        data["components"] = list(r.components)
    if r.properties:
        data["properties"] = dict(r.properties)
    if m.flipped:
        data["flipped"] = True
    return data


# --- reading ----------------------------------------------------------------------------------


def loads(text: str, *, where: str) -> Baseline:
    """A state from its JSON; anything but a version-2 baseline is a BaselineError saying what to do."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise BaselineError(f"{where}: JSON nested deeper than the parser follows; {_TODO}") from None
    except ValueError as exc:
        raise BaselineError(f"{where}: not JSON ({exc}); {_TODO}") from None
    _check_header(data, where)
    return _Reader(where).baseline(data)


def _check_header(data: object, where: str) -> None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(
            f'{where}: not an export-bot baseline (no "format": "{FORMAT}"); pass the baseline.json that '
            "`export-bot baseline merge` or `export-bot github baseline` wrote"
        )
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        raise BaselineError(
            f"{where} is version {version}, written by a newer export-bot (this one reads version {VERSION}); "
            "update the bot-ref or delete the artifact"
        )
    if version not in READ_VERSIONS:
        raise BaselineError(
            f"{where}: unknown baseline version {version!r} (this export-bot reads version {VERSION}, "
            "and a folder of JUnit XML as version 1); delete the artifact so the next merge starts anew"
        )


class _Reader:
    """Checks every field of a parsed document and builds the Baseline; the first problem is a BaselineError."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, path: str, what: str) -> BaselineError:
        return BaselineError(f"{self.where}: {path}: {what}; {_TODO}")

    def baseline(self, data: dict) -> Baseline:
        table = [self.measured_row(row, f"measured[{i}]") for i, row in enumerate(self.items(data, "measured"))]
        cells_data = data.get("cells", {})
        if not isinstance(cells_data, dict) or len(cells_data) > MAX_CELLS:
            raise self.fail("cells", f"expected an object of at most {MAX_CELLS:,} cells")
        cells = {}
        for cell_id, ms in cells_data.items():
            cell = self.cell(cell_id)
            if not isinstance(ms, list) or not 1 <= len(ms) <= MAX_PER_CELL:
                raise self.fail(f"cells[{_shown(cell_id)}]", f"expected a list of 1 to {MAX_PER_CELL} measurements")
            cells[cell] = tuple(self.measurement(cell, m, table, (cell_id, i)) for i, m in enumerate(ms))
        state = Baseline(
            segments=tuple(self.segment(s, f"segments[{i}]") for i, s in enumerate(self.items(data, "segments"))),
            cells=cells,
            full_sweeps=tuple(
                self.pair(s, "time", f"full_sweeps[{i}]") for i, s in enumerate(self.items(data, "full_sweeps"))
            ),
            due=tuple(self.pair(d, "reason", f"due[{i}]") for i, d in enumerate(self.items(data, "due"))),
            runs=frozenset(self.integer(r, f"runs[{i}]") for i, r in enumerate(self.items(data, "runs"))),
            footprints=self.footprints(data, table),
        )
        # Canonical whatever the file's order: newest first per cell, as every reader of the state assumes.
        return fold(state, keep=MAX_PER_CELL)

    def footprints(self, data: dict, table: list) -> dict[Cell, Footprint]:
        try:
            found = read_tables(data, len(table))
        except FootprintError as exc:
            raise self.fail("footprints", str(exc)) from None
        return {self.cell(cell_id): Footprint(*table[at], functions) for cell_id, (at, functions) in found.items()}

    def items(self, data: dict, key: str) -> list:
        value = data.get(key, [])
        if not isinstance(value, list) or len(value) > MAX_ITEMS:
            raise self.fail(key, f"expected a list of at most {MAX_ITEMS:,} entries")
        return value

    def fields(self, value: object, path: str, required: tuple[str, ...]) -> dict:
        if not isinstance(value, dict) or any(k not in value for k in required):
            raise self.fail(path, f"expected an object with {', '.join(required)}")
        return value

    def sha(self, value: object, path: str) -> str:
        if not isinstance(value, str) or not _SHA.fullmatch(value):
            raise self.fail(path, f"expected a commit SHA of 40 lowercase hex digits, not {_shown(value)}")
        return value

    def integer(self, value: object, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 63:
            raise self.fail(path, f"expected a whole number from 0, not {_shown(value)}")
        return value

    def text(self, value: object, path: str, limit: int = MAX_TEXT) -> str:
        if not isinstance(value, str) or len(value) > limit:
            raise self.fail(path, f"expected a string of at most {limit} characters")
        return value

    def time(self, value: object, path: str) -> str:
        try:
            return utc(self.text(value, path, 64))
        except ValueError:
            raise self.fail(path, f"expected an ISO 8601 time, not {_shown(value)}") from None

    def measured_row(self, row: object, path: str) -> tuple[str, str, int, str]:
        row = self.fields(row, path, ("commit", "time", "run_id", "source"))
        if row["source"] not in SOURCES:
            raise self.fail(f"{path}.source", f"expected one of {', '.join(SOURCES)}, not {_shown(row['source'])}")
        return (
            self.sha(row["commit"], f"{path}.commit"),
            self.time(row["time"], f"{path}.time"),
            self.integer(row["run_id"], f"{path}.run_id"),
            row["source"],
        )

    def segment(self, value: object, path: str) -> Segment:
        value = self.fields(value, path, ("parent", "commits"))
        parent = None if value["parent"] is None else self.sha(value["parent"], f"{path}.parent")
        commits = value["commits"]
        if not isinstance(commits, list) or not 1 <= len(commits) <= MAX_ITEMS:
            raise self.fail(f"{path}.commits", "expected a list of one or more commit SHAs")
        shas = tuple(self.sha(c, f"{path}.commits[{i}]") for i, c in enumerate(commits))
        return Segment(parent, shas, self.integer(value.get("run_id", 0), f"{path}.run_id"))

    def pair(self, value: object, second: str, path: str) -> tuple[str, str]:
        value = self.fields(value, path, ("commit", second))
        check = self.time if second == "time" else self.text
        return self.sha(value["commit"], f"{path}.commit"), check(value[second], f"{path}.{second}")

    def cell(self, cell_id: str) -> Cell:
        try:
            return Cell.parse(cell_id, lenient=True)
        except CellIdError as exc:
            raise self.fail(f"cells[{_shown(cell_id)}]", f"not a cell id ({exc})") from None

    # The per-measurement checks run 300,000 times on main's state: the field's path is spelled only
    # when it is wrong (`where` is the cell id and the index).

    def measurement(self, cell: Cell, value: object, table: list, where: tuple[str, int]) -> Measurement:
        if not isinstance(value, dict) or "at" not in value or "status" not in value:
            raise self.fail(_spelled(where), "expected an object with at, status")
        at = value["at"]
        if type(at) is not int or not 0 <= at < len(table):
            raise self.fail(_spelled(where, "at"), f"expected an index into `measured` (0 to {len(table) - 1})")
        commit, time, run_id, source = table[at]
        flipped = value.get("flipped", False)
        if type(flipped) is not bool:
            raise self.fail(_spelled(where, "flipped"), "expected true or false")
        return Measurement(commit, time, run_id, source, self.result(cell, value, where), flipped)

    def result(self, cell: Cell, value: dict, where: tuple[str, int]) -> CellResult:
        status = _STATUSES.get(value["status"]) if isinstance(value["status"], str) else None
        if status is None:
            known = ", ".join(_STATUSES)
            raise self.fail(_spelled(where, "status"), f"expected one of {known}, not {_shown(value['status'])}")
        texts = {key: value.get(key) for key in _TEXTS}
        texts["message"] = value.get("message", "")
        for key, found in texts.items():
            limit = MESSAGE_LIMIT if key == "message" else 200
            if found is not None and (type(found) is not str or len(found) > limit):
                raise self.fail(_spelled(where, key), f"expected a string of at most {limit} characters")
        probe = value.get("probe", False)
        if type(probe) is not bool:
            raise self.fail(_spelled(where, "probe"), "expected true or false")
        return CellResult(
            cell=cell,
            status=status,
            probe=probe,
            duration=self.duration(value.get("duration"), where),
            components=self.components(value["components"], where) if "components" in value else (),
            properties=self.properties(value["properties"], where) if "properties" in value else (),
            **texts,
        )

    def duration(self, value: object, where: tuple[str, int]) -> float | None:
        if value is None:
            return None
        if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
            raise self.fail(
                _spelled(where, "duration"), f"expected seconds, a finite number from 0, not {_shown(value)}"
            )
        return float(value)

    def components(self, value: object, where: tuple[str, int]) -> tuple[str, ...]:
        path = _spelled(where, "components")
        if not isinstance(value, list) or len(value) > 50:
            raise self.fail(path, "expected a list of at most 50 component names")
        return tuple(self.text(v, f"{path}[{i}]", 200) for i, v in enumerate(value))

    def properties(self, value: object, where: tuple[str, int]) -> tuple[tuple[str, str], ...]:
        path = _spelled(where, "properties")
        if not isinstance(value, dict) or set(value) - set(KEPT_PROPERTIES):
            raise self.fail(path, f"expected an object with only {', '.join(KEPT_PROPERTIES)}")
        return tuple((k, self.text(v, f"{path}.{k}", 200)) for k, v in sorted(value.items()))


_STATUSES = {status.value: status for status in RESULT_STATUSES}
_TEXTS = ("stage", "kind", "skip_scope", "exactness_scope")


def _spelled(where: tuple[str, int], key: str | None = None) -> str:
    cell_id, index = where
    return f"cells[{_shown(cell_id)}][{index}]" + (f".{key}" if key else "")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --- files and folders --------------------------------------------------------------------------


def read_state(path: Path | str) -> Baseline:
    """The state at `path`: a baseline.json or measurement.json file, or a folder holding them (all folded),
    or JUnit XML only (a file or a folder of them), a version-1 baseline, converted at its suites' git_sha; an empty folder is
    an empty state (no baseline yet)."""
    path = Path(path)
    if not path.is_dir() and path.suffix != ".xml":
        return loads(read_text(path), where=str(path))
    files = sorted([*path.rglob(STATE_FILE), *path.rglob(MEASUREMENT_FILE)]) if path.is_dir() else []
    if len(files) > MAX_FILES:
        raise BaselineError(f"{path}: more than {MAX_FILES} state files; pass the folder of one baseline")
    if files:
        return fold(*(loads(read_text(f), where=str(f)) for f in files), keep=MAX_PER_CELL)
    xml = sorted(path.rglob("*.xml")) if path.is_dir() else [path]
    if not xml:
        # `github baseline` found none yet: main's first merge starts the state.
        log.warning("%s holds no %s, %s or JUnit XML: an empty baseline", path, STATE_FILE, MEASUREMENT_FILE)
        return Baseline()
    from bot.results.merge import read_results

    newest = max(f.stat().st_mtime for f in xml)
    time = datetime.fromtimestamp(newest, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return from_junit_folder(read_results(xml), time=time, where=str(path))


def from_junit_folder(
    results: ResultSet, *, time: str, commit: str | None = None, run_id: int = 0, where: str = "the baseline"
) -> Baseline:
    """A version-1 baseline (today's sweep JUnit) as a state: one full-sweep measurement per cell at `commit`
    (default: the suites' one git_sha), source "sweep"."""
    commit = commit or results.git_sha
    if not commit or not _SHA.fullmatch(commit):
        raise BaselineError(
            f"{where}: a version-1 baseline (JUnit XML) whose suites name no one commit (git_sha {commit!r}); "
            "fetch it with `export-bot github baseline`, which converts it at its sweep's commit"
        )
    log.warning(
        "%s: a version-1 baseline (a folder of JUnit XML) of main@%s, converted to version %d",
        where,
        commit[:7],
        VERSION,
    )
    segment = Segment(None, (commit,), run_id)
    return measured(results, commit=commit, time=utc(time), run_id=run_id, source="sweep", segment=segment, full=True)


def durations(baseline: Baseline) -> dict[str, float]:
    """Seconds per cell id for shard balancing: each cell's newest measured duration."""
    found = {}
    for cell, ms in baseline.cells.items():
        seconds = next((m.result.duration for m in ms if m.result.duration is not None), None)
        if seconds is not None:
            found[cell.id] = seconds
    return found


def write_state(path: Path | str, baseline: Baseline) -> None:
    from bot.files import write_text

    write_text(path, dumps(baseline))
