"""Deterministic, balanced shards: greedy longest-first on known durations (docs/runner.md, Sharding)."""

from __future__ import annotations

import heapq
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.errors import BotError

# Seconds per cell when no earlier JUnit knows it, measured on the zoo on 2 cores:
# ExecuTorch lowers through XNNPACK and OpenVINO compiles, so they cost more than dynamo.
DEFAULT_SECONDS = {"dynamo": 4.0, "onnx": 8.0, "openvino": 10.0, "executorch": 12.0}
GENERATE_FACTOR = 2.0  # prefill and decode: two exports per cell


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
    """A cell's expected seconds: its measured duration when known, else the backend default."""
    if durations and cell.id in durations:
        return float(durations[cell.id])
    seconds = DEFAULT_SECONDS[cell.backend]
    return seconds * GENERATE_FACTOR if cell.generate else seconds


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
    """Seconds per cell id from an earlier JUnit file (`--durations`); testcases that are not cells are ignored.

    A streaming stdlib parse on purpose: only `classname`, `name` and `time` are needed, and the
    run stage must not depend on the results reader. The same cell twice (shards merged) keeps the longest.
    """
    path = Path(path)
    durations: dict[str, float] = {}
    try:
        for _, element in ET.iterparse(path, events=("end",)):
            if element.tag != "testcase":
                continue
            try:
                cell_id = Cell.from_testcase(element.get("classname", ""), element.get("name", "")).id
                seconds = float(element.get("time", ""))
            except (CellIdError, ValueError):
                continue
            finally:
                element.clear()
            durations[cell_id] = max(seconds, durations.get(cell_id, 0.0))
    except FileNotFoundError as exc:
        raise ShardError(f"--durations {path}: no such file; pass the JUnit XML of an earlier run") from exc
    except ET.ParseError as exc:
        line, column = exc.position
        raise ShardError(
            f"{path}:{line}:{column}: not readable JUnit XML ({exc}); pass an earlier run's JUnit file"
        ) from exc
    return durations
