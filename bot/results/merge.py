"""Merge the records of any number of JUnit files into one result set keyed by cell."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from bot.cells import Cell
from bot.outcomes import CellResult
from bot.results.convert import cell_of, result_of
from bot.results.junit import RERUN, CaseRecord, FileRead, read_file
from bot.results.model import Problem, ResultSet, SuiteInfo

log = logging.getLogger(__name__)


def read_results(paths: Sequence[Path | str], expect_shards: int | None = None) -> ResultSet:
    """Merge JUnit files (or folders of them) into one result set; never raises on bad input.

    A missing, empty, truncated or non-JUnit file, a cell found twice and a shard missing
    from `expect_shards` are all `Problem`s in the result, so the caller can still report.
    Files are read one after the other in this process, each turned into results before the
    next is read: a full sweep's post-processing stays within 1.5x a bare junitparser parse of
    the same files (benchmarks/postprocess.py), so a second process would not earn its keep.
    """
    problems: list[Problem] = []
    suites: list[SuiteInfo] = []
    files = _expand(paths, problems)
    # Tens of thousands of small objects and no cycles among them: the cyclic collector would
    # only re-scan them over and over while they are made.
    collecting = gc.isenabled()
    gc.disable()
    try:
        results, non_cells, duplicates = _merge(map(read_file, files), problems, suites)
    finally:
        if collecting:
            # The results live as long as the report does and hold no cycles. Frozen, the
            # collector skips them: otherwise its next full pass re-scans all of them, ~0.1 s
            # per 30,000 cells (refcounting still frees them as usual).
            gc.freeze()
            gc.enable()
    if expect_shards is not None:
        problems += shard_problems(suites, expect_shards)
    for problem in problems:
        log.warning("%s: %s", problem.file, problem.what)
    return ResultSet(
        results=results,
        problems=tuple(problems),
        non_cells=tuple(non_cells),
        duplicates=tuple(duplicates),
        suites=tuple(suites),
        files=tuple(map(str, files)),
    )


def _judged_by_checkout(record: CaseRecord) -> bool:
    """A test named with no backend is a cell only where the bot ran it for a checkout (docs/cells.md).

    The runner writes its `test` property on every such testcase (a crashed worker's too), and the
    checkout's `judge` on each it finished. Elsewhere `BertModel::test_something_else` is some
    other producer's test, as it always was.
    """
    return any(
        (key == "judge" and value.startswith("checkout:")) or (key == "test" and value == record.name)
        for key, value in record.extra
    )


def _merge(
    reads: Iterable[FileRead], problems: list[Problem], suites: list[SuiteInfo]
) -> tuple[dict[Cell, CellResult], list[str], list[Cell]]:
    """Records into results, file by file in the order given; a cell read twice is a duplicate, and a problem."""
    results: dict[Cell, CellResult] = {}
    non_cells: list[str] = []
    duplicates: list[Cell] = []
    for read in reads:
        problems += read.problems
        suites += read.suites
        file = read.file
        for record in read.cases:
            cell = cell_of(record.classname, record.name)
            if cell is None or (cell.test and not _judged_by_checkout(record)):
                non_cells.append(f"{record.classname}::{record.name}")
                continue
            result = result_of(cell, record, file)
            # One lookup for the usual case; a duplicate is rare and settled apart.
            earlier = results.setdefault(cell, result)
            if earlier is not result:
                duplicates.append(cell)
                problems.append(_duplicate(cell, earlier, result, results))
    return results, non_cells, duplicates


def _duplicate(cell: Cell, earlier: CellResult, later: CellResult, results: dict[Cell, CellResult]) -> Problem:
    """A cell read twice: the failing result is kept when only one fails, so no pass can hide a failure."""
    kept = "the first result is kept"
    if later.status.failing and not earlier.status.failing:
        results[cell] = later
        kept = f"this result ({later.status.value}) is kept over that one ({earlier.status.value}): a failure is never hidden"
    return Problem(
        later.source,
        None,
        f"{cell.id} is also in {earlier.source}; {kept}",
        "each cell must come from one shard: check that no two jobs ran the same --shard",
    )


def _expand(paths: Iterable[Path | str], problems: list[Problem]) -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.rglob("*.xml"))
            if not found:
                problems.append(Problem(str(path), None, "folder holds no *.xml file", RERUN))
            files += found
        else:
            files.append(path)
    return files


def shard_problems(suites: Sequence[SuiteInfo], expected: int) -> list[Problem]:
    """What `--expect-shards N` finds wrong: shards missing, or shards of another run."""
    shards = {s.shard for s in suites if s.shard}
    if not shards:
        readable = len({s.file for s in suites})
        if readable >= expected:
            return []
        return [
            Problem(
                "(shards)",
                None,
                f"expected {expected} shard files, read {readable}",
                "check that every shard job finished and uploaded its JUnit",
            )
        ]
    wanted = [f"{index}/{expected}" for index in range(1, expected + 1)]
    found = [
        Problem(
            f"(shard {shard})",
            None,
            f"shard {shard} is missing: no file carries it",
            "check that this shard job finished and uploaded its JUnit, then re-run the report",
        )
        for shard in wanted
        if shard not in shards
    ]
    return found + [
        Problem(
            f"(shard {shard})",
            None,
            f"shard {shard} does not belong to a {expected}-shard run",
            "pass --expect-shards with the matrix size, and only that run's files",
        )
        for shard in sorted(shards - set(wanted))
    ]
