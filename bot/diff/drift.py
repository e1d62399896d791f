"""Drift (docs/diff.md): passing cells whose measured figures moved beyond thresholds against their base result.

A pass says nothing of its quality. A PR that makes 200 exports ten times less exact, or twice
as slow, still passes every cell; drift names those cells. Pure: both sides' figures are the
testcase properties the runner wrote (docs/rules.md) and main's baseline keeps.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from bot import outcomes
from bot.cells import Cell
from bot.outcomes import CellResult

ERROR = "max_abs_error"  # figure.max_abs_error
EXPORT_SECONDS = "export_seconds"  # time.export
# time.test: the checkout's own test method, less its tester's setUp() (model build, export, run and
# compare as the test does them). The checkout's tests time nothing finer (docs/rules.md).
TEST_SECONDS = "test_seconds"
ARTIFACT = "artifact_bytes"  # figure.artifact_bytes
DELEGATED = "delegated_nodes"  # figure.delegated_nodes (ExecuTorch)
FIGURES = (ERROR, EXPORT_SECONDS, TEST_SECONDS, ARTIFACT, DELEGATED)
MAX_DRIFT = 500  # lines a report keeps (the comment shows fewer): a refactor moving every cell is one finding
_PROPERTY = {
    ERROR: outcomes.MAX_ABS_ERROR,
    EXPORT_SECONDS: outcomes.EXPORT_SECONDS,
    TEST_SECONDS: outcomes.TEST_SECONDS,
    ARTIFACT: outcomes.ARTIFACT_BYTES,
    DELEGATED: outcomes.DELEGATED_NODES,
}
_RATIO = outcomes.TOLERANCE_RATIO
RATIO = "tolerance_ratio"
LINE_FIGURES = (*FIGURES, RATIO)  # what a report line carries of its cell's figures, for the dashboard's history
_PROPERTY_OF_LINE = {**_PROPERTY, RATIO: _RATIO}


@dataclass(frozen=True)
class DriftRule:
    """The thresholds ([tool.export-bot] drift-*, docs/diff.md); `fails` makes drift fail the verdict."""

    error_factor: float = 10.0  # the head's error at least this many times the base's …
    error_floor: float = 0.5  # … and at least this share of its tolerance (small errors may grow freely)
    time_factor: float = 2.0  # the head's export (or checkout test) time at least this many times the base's …
    time_seconds: float = 5.0  # … and at least this many seconds longer
    artifact_factor: float = 1.2  # the head's artifact at least this many times the base's
    fails: bool = False  # (delegation drifts whenever fewer ops are lowered into a delegate)


class DriftLine(NamedTuple):
    """One figure of one cell that moved: its base and head values."""

    cell: str
    figure: str  # one of FIGURES
    base: float
    head: float

    def to_json(self) -> dict:
        return {"cell": self.cell, "figure": self.figure, "base": self.base, "head": self.head}


def drift(base: Mapping[Cell, CellResult], head: Mapping[Cell, CellResult], rule: DriftRule) -> tuple[DriftLine, ...]:
    """The figures that moved beyond `rule` on cells that pass on both sides, by cell id; at most MAX_DRIFT."""
    found: list[DriftLine] = []
    for cell, result in head.items():
        before = base.get(cell)
        if before is None or not (result.status.passing and before.status.passing):
            continue
        was, now = dict(line_figures(before)), dict(line_figures(result))  # each side's properties read once
        for figure in FIGURES:
            if figure in was and figure in now and _moved(figure, was[figure], now[figure], now.get(RATIO), rule):
                found.append(DriftLine(cell.id, figure, was[figure], now[figure]))
    return tuple(sorted(found)[:MAX_DRIFT])


def _moved(figure: str, was: float, now: float, ratio: float | None, rule: DriftRule) -> bool:
    if figure == ERROR:
        return ratio is not None and ratio >= rule.error_floor and now >= rule.error_factor * was and now > was
    if figure == ARTIFACT:
        return now >= rule.artifact_factor * was and now > was
    if figure == DELEGATED:
        return now < was
    return now >= rule.time_factor * was and now >= was + rule.time_seconds


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) and value >= 0 else None


def line_figures(result: CellResult) -> tuple[tuple[str, float], ...]:
    """The cell's measured figures a report line keeps, by name (none for a cell that measured nothing)."""
    properties = dict(result.properties)
    found = ((name, _number(properties.get(prop))) for name, prop in _PROPERTY_OF_LINE.items())
    return tuple(sorted((name, value) for name, value in found if value is not None))


def describe(line: DriftLine) -> str:
    """`max abs error 2.1e-06 → 3.4e-04 (×162)`, `export 3.2 s → 9.8 s (×3.1)`."""
    factor = f"×{line.head / line.base:.3g}" if line.base > 0 else "from zero"
    if line.figure in (EXPORT_SECONDS, TEST_SECONDS):
        what = "export" if line.figure == EXPORT_SECONDS else "the checkout's test"
        return f"{what} {line.base:.1f} s → {line.head:.1f} s ({factor})"
    if line.figure == ARTIFACT:
        return f"artifact {line.base / 1024:,.0f} KiB → {line.head / 1024:,.0f} KiB ({factor})"
    if line.figure == DELEGATED:
        return f"ops in a delegate {line.base:.0f} → {line.head:.0f}"
    return f"max abs error {line.base:.2g} → {line.head:.2g} ({factor})"
