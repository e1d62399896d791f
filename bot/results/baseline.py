"""Main's baseline (docs/baseline.md): per cell, its recent results on main, each with the commit it was measured at.

Every run on main (a push's selected cells, the full sweep, a bisect step) adds `Measurement`s;
`fold` unions states and measurements in any order to the same state, so concurrent runs and
merge jobs GitHub cancelled while pending lose nothing: the next merge folds in what they left.
A PR is judged against each cell's newest result at or before its merge base (`at`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.cells import Cell
from bot.outcomes import CellResult

FORMAT = "export-bot-baseline"
VERSION = 2
SOURCES = ("push", "sweep", "bisect")


@dataclass(frozen=True)
class Measurement:
    """One result of one cell on main."""

    commit: str  # the main commit the cell ran at
    time: str  # ISO 8601 UTC, when the run that measured it started
    run_id: int  # the workflow run (0 outside GitHub)
    source: str  # one of SOURCES
    result: CellResult  # status, stage, kind, message (cut to 500 characters), skip scope, probe, duration
    flipped: bool = False  # its confirming re-run on main disagreed with it


@dataclass(frozen=True)
class Segment:
    """Commits one push added to main, oldest first, and the commit they were pushed onto."""

    parent: str | None  # the push event's `before` (None: unknown, e.g. a sweep of a commit no push reported)
    commits: tuple[str, ...]  # the last one is the push event's `after`
    run_id: int = 0


@dataclass(frozen=True)
class Baseline:
    segments: tuple[Segment, ...] = ()
    cells: Mapping[Cell, tuple[Measurement, ...]] = field(default_factory=dict)  # newest first, at most `keep`
    full_sweeps: tuple[tuple[str, str], ...] = ()  # (commit, time) of the full sweeps kept, newest first
    due: tuple[str, ...] = ()  # why a full sweep is due since the last one ("shared: src/…/modeling_utils.py")
    runs: frozenset[int] = frozenset()  # the runs folded in (a measurement run is folded once)


@dataclass(frozen=True)
class Age:
    """How old the base a PR is judged against is, for the comment's one line."""

    newest: str | None  # the newest commit among the base results used
    behind: int | None  # commits between it and the merge base (None: a commit not in the chain)
    old_cells: int  # base results older than `stale-days`
    merge_base_known: bool  # False: the merge base is not in the chain; main's newest results were used
