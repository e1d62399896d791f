"""Deterministic, balanced shards: greedy longest-first on known durations (docs/runner.md, Sharding)."""

from __future__ import annotations

import functools
import heapq
import importlib.resources
import io
import json
import re
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.errors import BotError
from bot.files import read_bytes

# Seconds per cell when no earlier JUnit knows it: the mean CPU-seconds per backend × path ×
# shape measured by `benchmarks/sweep.py` on a stratified sample of the zoo, recorded in
# bot/data/cell_seconds.json by `sweep.py project --write` (docs/runner.md, Sharding).
RECORDED_TIMES = "cell_seconds.json"


def timing_key(cell: Cell) -> str:
    """The group a cell's recorded time is kept under: `backend/forward/shape` or `backend/generate/cache/shape`."""
    path = f"generate/{cell.cache or 'dynamic'}" if cell.generate else "forward"
    return f"{cell.backend}/{path}/{cell.shape}"


@functools.cache
def recorded_seconds() -> dict[str, float]:
    """The recorded mean seconds per `timing_key` (package data: a bot without it is a broken install)."""
    text = importlib.resources.files("bot.data").joinpath(RECORDED_TIMES).read_text(encoding="utf-8")
    return {key: float(value) for key, value in json.loads(text)["seconds"].items()}


class ShardError(BotError, ValueError):
    """A `--shard I/N` that names no shard."""


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` with 1 ≤ I ≤ N → (I, N)."""
    # ASCII digits only: str.isdigit() also accepts `²`, which int() refuses.
    match = re.fullmatch(r"([0-9]+)/([0-9]+)", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ShardError(f"--shard {text!r}: expected I/N with 1 ≤ I ≤ N, such as 1/4")
    return int(match[1]), int(match[2])


def estimate(cell: Cell, durations: Mapping[str, float] | None = None) -> float:
    """A cell's expected seconds: its measured duration when known, else the recorded time of its group.

    A group the sample never measured (a new backend target, a static-cache variant) costs
    the mean of its backend's recorded groups, so it still sorts with its backend.
    """
    if durations and cell.id in durations:
        return float(durations[cell.id])
    recorded = recorded_seconds()
    key = timing_key(cell)
    if key in recorded:
        return recorded[key]
    same_backend = [seconds for k, seconds in recorded.items() if k.startswith(f"{cell.backend}/")]
    return statistics.fmean(same_backend or recorded.values())


# Workers per shard job (`export-bot run -n 2` on a 2-core runner): a shard's cells take about their
# CPU-seconds over this many processes.
SHARD_WORKERS = 2


def shard_count(
    cells: Sequence[Cell], durations: Mapping[str, float] | None, *, cap: int, budget_seconds: float | None
) -> int:
    """How many shard jobs the selection needs: its estimated cost over the per-shard budget, within `cap`.

    The estimate is each cell's measured or recorded seconds (`estimate`) run by `SHARD_WORKERS`
    workers; no budget means `cap` shards (or one per cell, when there are fewer cells).
    A selection whose longest cell alone outlasts the budget still gets one shard per cell at most.
    """
    if not cells:
        return 0
    if budget_seconds is None or budget_seconds <= 0:
        return max(1, min(cap, len(cells)))
    unique = set(cells)
    total = sum(estimate(cell, durations) for cell in unique) / SHARD_WORKERS
    needed = -(-total // budget_seconds)  # ceiling
    return int(max(1, min(cap, len(unique), needed)))


def assign_shards(cells: Sequence[Cell], count: int, durations: Mapping[str, float] | None = None) -> list[list[Cell]]:
    """Split `cells` into `count` parts; every cell lands in exactly one, the same for the same input.

    Longest-processing-time-first: cells sorted by estimate (id breaks ties, so the result
    never depends on input order), each given to the currently lightest shard.
    """
    if count < 1:
        raise ShardError(f"shard count must be at least 1, not {count}")
    unique = sorted(set(cells), key=lambda c: (-estimate(c, durations), c.id))
    shards: list[list[Cell]] = [[] for _ in range(count)]
    heap = [(0.0, i) for i in range(count)]
    for cell in unique:
        load, i = heapq.heappop(heap)
        shards[i].append(cell)
        heapq.heappush(heap, (load + estimate(cell, durations), i))
    return [sorted(shard) for shard in shards]


def select_shard(
    cells: Sequence[Cell], shard: tuple[int, int], durations: Mapping[str, float] | None = None
) -> list[Cell]:
    """The cells of shard `I/N` (1-based), as `--shard I/N` runs them."""
    index, count = shard
    return assign_shards(cells, count, durations)[index - 1]


def read_durations(path: Path | str) -> dict[str, float]:
    """Seconds per cell id from an earlier run's JUnit (`--durations`): one file, or every `*.xml` in a folder.

    A folder is how a baseline artifact arrives (one file per shard). Testcases that are not
    cells are ignored; the same cell twice (shards merged) keeps the longest.
    """
    path = Path(path)
    if path.is_dir():
        durations: dict[str, float] = {}
        for file in sorted(path.rglob("*.xml")):
            for cell_id, seconds in _read_junit_times(file).items():
                durations[cell_id] = max(seconds, durations.get(cell_id, 0.0))
        return durations
    return _read_junit_times(path)


def _read_junit_times(path: Path) -> dict[str, float]:
    """A stdlib parse on purpose: only `classname`, `name` and `time` are needed, and the run
    stage must not depend on the results reader (which reads everything else of a JUnit file)."""
    durations: dict[str, float] = {}
    try:
        for _, element in ET.iterparse(io.BytesIO(read_bytes(path)), events=("end",)):
            if element.tag != "testcase":
                continue
            try:
                cell_id = Cell.from_testcase(element.get("classname", ""), element.get("name", ""), lenient=True).id
                seconds = float(element.get("time", ""))
            except (CellIdError, ValueError):
                continue
            finally:
                element.clear()
            durations[cell_id] = max(seconds, durations.get(cell_id, 0.0))
    except FileNotFoundError as exc:
        raise ShardError(
            f"--durations {path}: no such file or folder; pass the JUnit XML of an earlier run (a file, or a folder of them)"
        ) from exc
    except ET.ParseError as exc:
        line, column = exc.position
        raise ShardError(
            f"{path}:{line}:{column}: not readable JUnit XML ({exc}); pass an earlier run's JUnit file"
        ) from exc
    return durations
