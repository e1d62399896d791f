"""Small builders for proposal tests: rows of cells, results, reports, skiplist folders."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from bot.cells import Cell, cells_for
from bot.diff.model import CellLine, Report
from bot.diff.proposal import Proposal
from bot.outcomes import CellResult, Status
from bot.propose.proposal import apply_edits, propose, results_from_report
from bot.propose.texts import write_texts
from bot.skiplist.model import read_skiplists, read_texts

BACKENDS4 = ("dynamo", "onnx", "openvino", "executorch")


def row(model_class: str = "FooModel", *, generative: bool = False, targets=("xnnpack",)) -> list[Cell]:
    return list(cells_for(model_class, generative=generative, targets=targets))


def result(cell: Cell, status: Status = Status.PASSED, *, stage=None, message="", probe=False, kind=None) -> CellResult:
    if status is Status.FAILED and stage is None:
        stage = "export"
    return CellResult(cell, status, stage=stage, kind=kind, message=message, probe=probe)


def outcomes(cells: Iterable[Cell], failing: Callable[[Cell], bool], message="RuntimeError: boom", probe=False):
    return {
        c: result(c, Status.FAILED if failing(c) else Status.PASSED, message=message if failing(c) else "", probe=probe)
        for c in cells
    }


def line(r: CellResult, **extra) -> CellLine:
    return CellLine(
        cell=r.cell.id,
        status=r.status.value,
        stage=r.stage,
        kind=r.kind,
        message=r.message,
        probe=r.probe,
        skip_scope=r.skip_scope,
        exactness_scope=r.exactness_scope,
        **extra,
    )


def report(results: dict[Cell, CellResult], *, new_failing: Iterable[Cell] | None = None) -> Report:
    """A no-baseline report: every failing non-probe cell is `new_failing` (as the diff files it)."""
    if new_failing is None:
        new_failing = [c for c, r in results.items() if r.status.failing and not r.probe]
    return Report(
        verdict="failure",
        headline="",
        baseline=False,
        categories={"new_failing": tuple(line(results[c]) for c in sorted(new_failing))},
        cells=tuple(line(results[c]) for c in sorted(results)),
    )


def skiplists_dir(tmp_path: Path, skips: str = "", optimize: str = "") -> Path:
    folder = tmp_path / "skiplists"
    folder.mkdir()
    (folder / "export_skips.toml").write_text(skips, encoding="utf-8")
    (folder / "onnx_disable_optimize.toml").write_text(optimize, encoding="utf-8")
    return folder


def propose_at(report_: Report, folder: Path, *, history=(), min_passes: int = 3, walk=None) -> Proposal:
    """`propose` as the CLI calls it: the folder read once (under `walk`), the report's (and history's) lines as results."""
    runs = [results_from_report(h) if isinstance(h, Report) else h for h in history]
    head = results_from_report(report_)
    return propose(report_, head, read_skiplists(folder, walk), history=runs, min_passes=min_passes)


def apply_at(proposal: Proposal, folder: Path) -> list[Path]:
    """The proposal's entries applied to the folder's current texts and written back: the files changed."""
    return write_texts(folder, apply_edits(proposal.entries, read_texts(folder)))
