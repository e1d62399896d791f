"""Stand-in for the baseline functions docs/baseline.md names (fold, measured, chain, regressions, dumps, loads).

Same names, signatures and meanings as the shared design; the real ones live in
bot/results/baseline.py. Imported in one place per layer (bot/publish/tracking.py,
bot/jobs/bisect.py) so swapping this module for the real one is one import line each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from bot.cells import Cell, CellIdError
from bot.errors import BotError
from bot.outcomes import CellResult, Status
from bot.results.baseline import FORMAT, SOURCES, VERSION, Baseline, Measurement, Segment
from bot.results.model import ResultSet

MESSAGE = 500  # characters of a result's message kept in the state
_HEX = frozenset("0123456789abcdef")


class BaselineError(BotError, ValueError):
    """A baseline state file the bot cannot read; the message says what to do."""


@dataclass(frozen=True)
class Regression:
    """A cell failing on main now that passed earlier: the last good and first bad measurements, the commits between."""

    cell: Cell
    good: Measurement
    bad: Measurement  # the oldest failing measurement newer than `good`
    culprit: str | None
    candidates: tuple[str, ...]  # chain commits after good.commit up to and including bad.commit


def chain(baseline: Baseline) -> tuple[str, ...]:
    """Main's commits oldest → newest: the longest run of segments each pushed onto the previous one's last commit."""
    by_tail = {s.commits[-1]: s for s in baseline.segments if s.commits}
    best: tuple[str, ...] = ()
    for segment in baseline.segments:
        if not segment.commits:
            continue
        commits, seen, current = list(segment.commits), {segment.commits[-1]}, segment
        while current.parent in by_tail and current.parent not in seen:
            current = by_tail[current.parent]
            seen.add(current.commits[-1])
            commits[:0] = current.commits
        if len(commits) > len(best):
            best = tuple(dict.fromkeys(commits))
    return best


def _order(positions: Mapping[str, int], items) -> list[Measurement]:
    return sorted(items, key=lambda m: (positions.get(m.commit, -1), m.time, m.run_id), reverse=True)


def fold(*parts: Baseline, keep: int = 10) -> Baseline:
    """The union of states: per cell, measurements deduplicated by (commit, run_id), newest first, at most `keep`."""
    segments = tuple(dict.fromkeys(s for p in parts for s in p.segments))
    positions = {c: i for i, c in enumerate(chain(Baseline(segments=segments)))}
    cells: dict[Cell, dict[tuple[str, int], Measurement]] = {}
    for part in parts:
        for cell, found in part.cells.items():
            for m in found:
                cells.setdefault(cell, {}).setdefault((m.commit, m.run_id), m)
    sweeps = sorted({s for p in parts for s in p.full_sweeps}, key=lambda s: s[1], reverse=True)
    return Baseline(
        segments=segments,
        cells={cell: tuple(_order(positions, found.values())[:keep]) for cell, found in sorted(cells.items())},
        full_sweeps=tuple(sweeps),
        due=tuple(dict.fromkeys(d for p in parts for d in p.due)),
        runs=frozenset(r for p in parts for r in p.runs),
    )


def measured(
    results: ResultSet,
    *,
    commit: str,
    time: str,
    run_id: int,
    source: str,
    segment: Segment | None,
    rerun: ResultSet | None = None,
    full: bool = False,
    due: tuple[str, ...] = (),
) -> Baseline:
    """One run's results as a Baseline; `flipped` marks a cell whose re-run's passing/failing outcome differs."""
    again = rerun.results if rerun is not None else {}
    cells = {}
    for cell, result in results.results.items():
        other = again.get(cell)
        flipped = other is not None and other.status.passing != result.status.passing
        kept = CellResult(
            cell, result.status, result.stage, result.kind, result.message[:MESSAGE], "", result.skip_scope
        )
        cells[cell] = (Measurement(commit, time, run_id, source, kept, flipped),)
    return Baseline(
        segments=(segment,) if segment else (),
        cells=cells,
        full_sweeps=((commit, time),) if full else (),
        due=due,
        runs=frozenset({run_id}),
    )


def _failing(result: CellResult) -> bool:
    return result.status.failing and not result.infrastructure


def regressions(baseline: Baseline, skiplists) -> tuple[Regression, ...]:
    """Cells whose newest measurement fails (not infrastructure), not skiplisted, with an earlier passing one."""
    order = chain(baseline)
    positions = {c: i for i, c in enumerate(order)}
    found = []
    for cell, history in sorted(baseline.cells.items()):
        if not history or not _failing(history[0].result) or skiplists.explain(cell).skipped:
            continue
        bad, good = history[0], None
        for m in history[1:]:
            if m.result.status.passing:
                good = m
                break
            if _failing(m.result):
                bad = m
        if good is None:
            continue
        if good.commit in positions and bad.commit in positions:
            candidates = order[positions[good.commit] + 1 : positions[bad.commit] + 1]
        else:  # a force-push or a gap: no commit range to bisect
            candidates = ()
        found.append(Regression(cell, good, bad, _culprit(baseline, bad, candidates), tuple(candidates)))
    return tuple(found)


def _culprit(baseline: Baseline, bad: Measurement, candidates: tuple[str, ...]) -> str | None:
    if len(candidates) == 1:
        return bad.commit
    if bad.source == "push":
        for segment in baseline.segments:
            if segment.commits == (bad.commit,) and segment.run_id == bad.run_id:
                return bad.commit
    return None


# --- the state file ----------------------------------------------------------------------------


def dumps(baseline: Baseline) -> str:
    return json.dumps(
        {
            "format": FORMAT,
            "version": VERSION,
            "segments": [
                {"parent": s.parent, "commits": list(s.commits), "run_id": s.run_id} for s in baseline.segments
            ],
            "cells": {cell.id: [_measurement_json(m) for m in found] for cell, found in sorted(baseline.cells.items())},
            "full_sweeps": [list(s) for s in baseline.full_sweeps],
            "due": list(baseline.due),
            "runs": sorted(baseline.runs),
        },
        indent=1,
    )


def _measurement_json(m: Measurement) -> dict:
    r = m.result
    result = {"status": r.status.value, "stage": r.stage, "kind": r.kind, "message": r.message, "probe": r.probe}
    return {"commit": m.commit, "time": m.time, "run_id": m.run_id, "source": m.source, "flipped": m.flipped, **result}


def loads(text: str, *, where: str) -> Baseline:
    """The state in `text`; anything malformed is a BaselineError naming `where` and what to do."""
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            raise BaselineError(f"{where}: not an {FORMAT} version {VERSION} file; pass the baseline.json of a merge")
        segments = tuple(
            Segment(
                _sha(s["parent"], where) if s["parent"] else None,
                tuple(_sha(c, where) for c in s["commits"]),
                int(s["run_id"]),
            )
            for s in data["segments"]
        )
        cells = {}
        for cid, found in data["cells"].items():
            cell = Cell.parse(cid)
            cells[cell] = tuple(_measurement(cell, m, where) for m in found)
        return Baseline(
            segments=segments,
            cells=cells,
            full_sweeps=tuple((str(c), str(t)) for c, t in data["full_sweeps"]),
            due=tuple(str(d) for d in data["due"]),
            runs=frozenset(int(r) for r in data["runs"]),
        )
    except BaselineError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, CellIdError, RecursionError) as exc:
        raise BaselineError(
            f"{where}: a malformed baseline ({type(exc).__name__}: {str(exc)[:200]}); re-run the merge"
        ) from None


def _sha(value: object, where: str) -> str:
    if not isinstance(value, str) or len(value) != 40 or not set(value) <= _HEX:
        raise BaselineError(f"{where}: {str(value)[:60]!r} is not a 40-hex commit SHA; re-run the merge")
    return value


def _measurement(cell: Cell, m: Mapping, where: str) -> Measurement:
    source = m["source"]
    if source not in SOURCES:
        raise BaselineError(f"{where}: unknown source {str(source)[:40]!r} (expected one of {', '.join(SOURCES)})")
    result = CellResult(
        cell,
        Status(m["status"]),
        m.get("stage"),
        m.get("kind"),
        str(m.get("message") or "")[:MESSAGE],
        probe=bool(m.get("probe")),
    )
    return Measurement(_sha(m["commit"], where), str(m["time"]), int(m["run_id"]), source, result, bool(m["flipped"]))
