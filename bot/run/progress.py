"""Live progress of a run (cells done, failures, elapsed, estimate left) and the closing backend × outcome table."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TextIO

from bot.cells import BACKENDS, Cell, placed, unread
from bot.outcomes import RESULT_STATUSES, Status


def format_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@dataclass
class Progress:
    """Counts as cells finish, and guesses the time left from the cells' own measured times.

    Each cell still to run is expected to take what the finished cells of its kind (backend and
    path) took on this machine; a kind none has finished yet takes its recorded estimate
    (`estimates`, seconds per cell id), scaled by how the finished cells compared with theirs.
    The time left is that work over the workers really busy: the seconds cells have run,
    finished or still running, over the time since the first started. Nothing before the first
    cell's start counts (the interpreter, torch's import, the collection), nor the first cell's
    pace alone: an ETA from the run's start said 25 minutes after one cell of a 5-minute run, and
    one from recorded estimates alone twice the real time on the smoke preset.
    """

    cells: tuple[Cell, ...]
    estimates: Mapping[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    outcomes: dict[Cell, Status] = field(default_factory=dict)
    first_done: float | None = None  # when the first cell finished
    running: dict[Cell, float] = field(default_factory=dict)  # cell → when it started
    seconds: dict[Cell, float] = field(default_factory=dict)  # finished cell → how long it ran
    first_start: float | None = None

    def start(self, cell: Cell, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.running[cell] = now
        self.first_start = now if self.first_start is None else self.first_start

    def record(self, cell: Cell, status: Status, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self.first_done is None:
            self.first_done = now
        began = self.running.pop(cell, None)
        if began is not None:
            self.seconds[cell] = now - began
        self.outcomes[cell] = status

    @property
    def failing(self) -> int:
        return sum(status.failing for status in self.outcomes.values())

    def left(self, now: float) -> float | None:
        """Seconds still to go; None until a cell has finished with its time measured."""
        if not self.seconds or self.first_start is None or now <= self.first_start:
            return None
        todo = [cell for cell in self.cells if cell not in self.outcomes]
        if not todo:
            return 0.0
        expected = self._expected()
        work = sum(expected(cell) for cell in todo) - sum(now - began for began in self.running.values())
        busy = sum(self.seconds.values()) + sum(now - began for began in self.running.values())
        workers = max(busy / (now - self.first_start), 1.0)
        return max(work, 0.0) / workers

    def _expected(self) -> Callable[[Cell], float]:
        """A cell's expected seconds: the mean of its finished kind, else its estimate scaled like the finished."""
        by_kind: dict[tuple, list[float]] = {}
        for cell, took in self.seconds.items():
            by_kind.setdefault(_kind(cell), []).append(took)
        means = {kind: sum(times) / len(times) for kind, times in by_kind.items()}
        recorded = sum(self.estimates.get(cell.id, 1.0) for cell in self.seconds)
        scale = sum(self.seconds.values()) / recorded if recorded else 1.0
        return lambda cell: means.get(_kind(cell), self.estimates.get(cell.id, 1.0) * scale)

    def line(self, now: float | None = None, last: tuple[Cell, Status] | None = None) -> str:
        now = time.monotonic() if now is None else now
        total = len(self.cells)
        width = len(str(total))
        left = self.left(now)
        parts = [
            f"[{len(self.outcomes):>{width}}/{total}]",
            f"{self.failing} failing",
            f"{format_seconds(now - self.started)} elapsed",
            "estimating" if left is None else f"~{format_seconds(left)} left",
        ]
        text = " · ".join(parts)
        if last:
            text += f" · {last[1].value}: {last[0].id}"
        return text


def _kind(cell: Cell) -> tuple:
    return (cell.backend, cell.generate, cell.static_cache)


COLUMNS = RESULT_STATUSES  # what a run writes: `missing` is the report's, never a run's


def summary_table(outcomes: Mapping[Cell, Status]) -> str:
    """Rows per backend, columns per outcome, totals; a plain-text table for the end of a run."""
    return "\n".join(_aligned(_count_rows(outcomes)) + _unread_warning(outcomes))


def _count_rows(outcomes: Mapping[Cell, Status]) -> list[list[str]]:
    """The header, a row of counts per backend that has cells, and the totals."""
    # A cell on a backend the bot does not know, or on none (docs/cells.md), is one `other` row.
    row_of = {cell: cell.backend if placed(cell) else "other" for cell in outcomes}
    counts = {(row_of[cell], status): 0 for cell in outcomes for status in COLUMNS}
    for cell, status in outcomes.items():
        counts[row_of[cell], status] += 1
    backends = [backend for backend in (*BACKENDS, "other") if backend in row_of.values()]
    rows = [["backend", *(status.value for status in COLUMNS), "total"]]
    for backend in backends:
        row = [counts[backend, status] for status in COLUMNS]
        rows.append([backend, *map(str, row), str(sum(row))])
    totals = [sum(counts[backend, status] for backend in backends) for status in COLUMNS]
    rows.append(["all", *map(str, totals), str(sum(totals))])
    return rows


def _aligned(rows: list[list[str]]) -> list[str]:
    """The rows in columns, names left and counts right, with a rule under the header and over the totals."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def render(row: list[str]) -> str:
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))

    rule = "  ".join("-" * w for w in widths)
    return [render(rows[0]), rule, *map(render, rows[1:-1]), rule, render(rows[-1])]


def _unread_warning(outcomes: Mapping[Cell, Status]) -> list[str]:
    """Collected tests the bot could not place are cells all the same; the summary says so, never an info line."""
    names = sorted({cell.test for cell in outcomes if unread(cell)})
    if not names:
        return []
    shown = ", ".join(names[:5]) + (f", and {len(names) - 5} more" if len(names) > 5 else "")
    return [f"warning: {len(names)} test name(s) the bot cannot read, run and reported by name (row `other`): {shown}"]


class ProgressWriter:
    """Writes progress to a stream: one line rewritten in place on a terminal, plain lines otherwise (CI logs)."""

    def __init__(self, progress: Progress, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        self.progress = progress
        self.stream = stream
        self.clock = clock
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def start(self, cell: Cell) -> None:
        self.progress.start(cell, self.clock())

    def update(self, cell: Cell, status: Status) -> None:
        self.progress.record(cell, status, self.clock())
        line = self.progress.line(self.clock(), (cell, status))
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.progress.outcomes:
            self.stream.write("\n")
        self.stream.write(summary_table(self.progress.outcomes) + "\n")
        self.stream.flush()
