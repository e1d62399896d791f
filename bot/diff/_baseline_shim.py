"""A stand-in for bot/results/baseline.py's readers (chain, at, newest, flips, dumps, loads), with their signatures.

Only `bot.jobs.stages.main_baseline` imports it: that one line changes to bot.results.baseline
once the real module holds these functions. Semantics as docs/baseline.md states them.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from bot.cells import Cell, CellIdError
from bot.errors import BotError
from bot.outcomes import CellResult, Status
from bot.results.baseline import FORMAT, SOURCES, VERSION, Age, Baseline, Measurement, Segment
from bot.results.model import ResultSet

_HEX = frozenset("0123456789abcdef")
_RESULT_FIELDS = ("stage", "kind", "message", "skip_scope", "exactness_scope")


class BaselineError(BotError):
    """baseline.json is not a baseline this bot reads; the message says what to do."""


def chain(baseline: Baseline) -> tuple[str, ...]:
    """Main's commits oldest → newest: each segment follows the one whose last commit is its parent.

    A segment whose parent no segment ends with (a force-push, a gap) starts a new run of the chain,
    after what is already linked.
    """
    ends = {segment.commits[-1]: segment for segment in baseline.segments if segment.commits}
    followers: dict[str | None, list[Segment]] = {}
    for segment in baseline.segments:
        if segment.commits:
            followers.setdefault(segment.parent if segment.parent in ends else None, []).append(segment)
    order: dict[str, None] = {}  # insertion-ordered: a commit two segments name is placed once
    todo = list(reversed(followers.get(None, [])))
    while todo:
        segment = todo.pop()
        fresh = segment.commits[-1] not in order
        order.update(dict.fromkeys(segment.commits))
        if fresh:  # a segment pushed twice (a re-run) is followed once
            todo += reversed(followers.get(segment.commits[-1], []))
    return tuple(order)


def at(baseline: Baseline, merge_base: str | None, *, now: str, stale_days: float) -> tuple[ResultSet, Age]:
    """Per cell, its newest measurement at or before `merge_base`; each cell's newest when the chain lacks it."""
    commits = chain(baseline)
    position = {commit: index for index, commit in enumerate(commits)}
    limit = position.get(merge_base) if merge_base else None
    chosen: dict[Cell, Measurement] = {}
    for cell, measurements in baseline.cells.items():
        found = (
            measurements[0]
            if limit is None
            else next((m for m in measurements if position.get(m.commit, limit + 1) <= limit), None)
        )
        if found is not None:
            chosen[cell] = found
    known = [position[m.commit] for m in chosen.values() if m.commit in position]
    newest = commits[max(known)] if known else next((m.commit for m in chosen.values()), None)
    behind = limit - max(known) if limit is not None and known else None
    cutoff = _time(now) - timedelta(days=stale_days)
    old = sum(1 for m in chosen.values() if _time(m.time) < cutoff)
    age = Age(newest=newest, behind=behind, old_cells=old, merge_base_known=limit is not None)
    return ResultSet(results={cell: m.result for cell, m in chosen.items()}), age


def newest(baseline: Baseline) -> ResultSet:
    """Each cell's newest result on main."""
    return ResultSet(results={cell: ms[0].result for cell, ms in baseline.cells.items() if ms})


def flips(baseline: Baseline, window: int) -> dict[Cell, int]:
    """Cells that flipped on main within their last `window` measurements, with how often."""
    found = {}
    for cell, measurements in baseline.cells.items():
        recent = measurements[:window]
        count = sum(m.flipped for m in recent)
        count += sum(
            1
            for a, b in zip(recent, recent[1:])
            if a.commit == b.commit and a.result.status.passing != b.result.status.passing
        )
        if count:
            found[cell] = count
    return found


def dumps(baseline: Baseline) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "version": VERSION,
            "segments": [
                {"parent": s.parent, "commits": list(s.commits), "run_id": s.run_id} for s in baseline.segments
            ],
            "cells": {cell.id: [_measurement_json(m) for m in ms] for cell, ms in baseline.cells.items()},
            "full_sweeps": [list(sweep) for sweep in baseline.full_sweeps],
            "due": list(baseline.due),
            "runs": sorted(baseline.runs),
        },
        indent=1,
    )


def _measurement_json(m: Measurement) -> dict:
    r = m.result
    result = {"status": r.status.value, "probe": r.probe, "duration": r.duration}
    result.update({name: getattr(r, name) for name in _RESULT_FIELDS})
    return {"commit": m.commit, "time": m.time, "run_id": m.run_id, "source": m.source, "flipped": m.flipped, **result}


def loads(text: str, *, where: str) -> Baseline:
    """baseline.json's text as a Baseline; anything else is a BaselineError naming the file."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            raise BaselineError(
                f"{where}: not an {FORMAT} version {VERSION} file; write it with `export-bot baseline merge`"
            )
        segments = tuple(
            Segment(_sha(s["parent"], True), tuple(_sha(c) for c in s["commits"]), _int(s["run_id"]))
            for s in data["segments"]
        )
        cells = {}
        for cell_id, ms in data["cells"].items():
            cell = Cell.parse(_str(cell_id))
            cells[cell] = tuple(_measurement(cell, m) for m in ms)
        sweeps = tuple((_sha(c), _str(t)) for c, t in data["full_sweeps"])
        due = tuple(_str(reason) for reason in data["due"])
        return Baseline(segments, cells, sweeps, due, frozenset(_int(r) for r in data["runs"]))
    except BaselineError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, CellIdError) as exc:
        raise BaselineError(
            f"{where}: not a valid baseline ({type(exc).__name__}: {str(exc)[:200]}); "
            "write it with `export-bot baseline merge`"
        ) from None


def _measurement(cell: Cell, data: dict) -> Measurement:
    source = data["source"]
    if source not in SOURCES:
        raise ValueError(f"unknown source {str(source)[:40]!r}")
    duration = data.get("duration")
    result = CellResult(
        cell,
        Status(data["status"]),
        probe=bool(data.get("probe")),
        duration=float(duration) if duration is not None else None,
        **{name: _str(data[name], True) for name in _RESULT_FIELDS if name != "message"},
        message=_str(data.get("message", "")),
    )
    _time(_str(data["time"]))  # refused here, not when a report asks for the age
    return Measurement(
        _sha(data["commit"]), data["time"], _int(data["run_id"]), source, result, data["flipped"] is True
    )


def _sha(value, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not (isinstance(value, str) and len(value) == 40 and set(value) <= _HEX):
        raise ValueError(f"{str(value)[:50]!r} is not a 40-character commit SHA")
    return value


def _str(value, optional: bool = False) -> str | None:
    if (value is None and optional) or (isinstance(value, str) and len(value) <= 100_000):
        return value
    raise ValueError("a string field holds something else, or more than 100,000 characters")


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{str(value)[:40]!r} is not a whole number")
    return value


def _time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
