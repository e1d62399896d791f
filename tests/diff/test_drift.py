"""Drift: passing cells whose measured figures moved beyond the thresholds against their base (docs/diff.md)."""

from __future__ import annotations

import json

import pytest

from bot.cells import Cell
from bot.diff import diff
from bot.diff.drift import ERROR, EXPORT_SECONDS, TEST_SECONDS, DriftLine, DriftRule, describe, drift
from bot.diff.errors import ReportError
from bot.diff.model import Report
from bot.outcomes import CellResult, Status
from bot.report import render_comment, render_summary
from bot.results import ResultSet
from bot.skiplist.model import load_skiplists

CELL = Cell.parse("BertModel::test_onnx_export_dynamic")


def passed(error: float | None = None, ratio: float = 0.0, export: float | None = None, cell: Cell = CELL, test=None):
    properties = [("time.test", f"{test:.3f}")] if test is not None else []
    if error is not None:
        properties += [("figure.max_abs_error", repr(error)), ("figure.tolerance_ratio", repr(ratio))]
    if export is not None:
        properties.append(("time.export", f"{export:.3f}"))
    return CellResult(cell, Status.PASSED, properties=tuple(properties))


@pytest.mark.parametrize(
    ("base", "head", "moved"),
    [
        (passed(1e-6, 0.001), passed(2e-4, 0.6), [ERROR]),  # ×200 and past half its tolerance
        (passed(1e-6, 0.001), passed(2e-4, 0.2), []),  # ×200, still far inside its tolerance
        (passed(1e-4, 0.5), passed(5e-4, 0.9), []),  # ×5 only
        (passed(0.0, 0.0), passed(6e-4, 0.6), [ERROR]),  # exact before
        (passed(export=3.0), passed(export=9.0), [EXPORT_SECONDS]),  # ×3 and +6 s
        (passed(export=1.0), passed(export=4.0), []),  # ×4 but +3 s: noise on a fast export
        (passed(export=3.0), passed(export=7.0), []),  # ×2.3 but only +4 s
        # The checkout's own test times only its method: the same thresholds on that time.
        (passed(test=2.5), passed(test=8.5), [TEST_SECONDS]),  # ×3.4 and +6 s
        (passed(test=2.5), passed(test=6.5), []),  # ×2.6 but only +4 s
        (passed(1e-6, 0.001, export=2.0), passed(1e-3, 0.9, export=20.0), [ERROR, EXPORT_SECONDS]),
    ],
)
def test_what_counts_as_drift(base, head, moved):
    found = drift({CELL: base}, {CELL: head}, DriftRule())
    assert sorted(line.figure for line in found) == sorted(moved)


def test_a_cell_failing_on_either_side_or_without_figures_never_drifts():
    failing = CellResult(CELL, Status.FAILED, properties=(("figure.max_abs_error", "1"),))
    assert drift({CELL: passed(1e-6, 0.0)}, {CELL: failing}, DriftRule()) == ()
    assert drift({CELL: passed()}, {CELL: passed(1e-3, 0.9)}, DriftRule()) == ()
    hostile = passed(1e-6, 0.0)
    nan = CellResult(CELL, Status.PASSED, properties=(("figure.max_abs_error", "nan"), ("figure.tolerance_ratio", "1")))
    assert drift({CELL: hostile}, {CELL: nan}, DriftRule()) == ()


def test_the_report_carries_drift_and_the_comment_shows_it_without_failing_by_default(tmp_path):
    skiplists = load_skiplists(tmp_path)
    base = ResultSet({CELL: passed(1e-6, 0.001, export=2.0)})
    head = ResultSet({CELL: passed(4e-4, 0.7, export=2.1)})
    report = diff(base, head, skiplists)
    assert report.verdict == "success"
    assert report.drift == (DriftLine(CELL.id, ERROR, 1e-6, 4e-4),)
    again = Report.from_json(json.loads(json.dumps(report.to_json())))
    assert again.drift == report.drift
    comment = render_comment(report)
    assert "📈 1 cell drifted: figures moved against the base; the verdict leaves them out" in comment
    assert "max abs error 1e-06 → 0.0004 (×400)" in comment
    assert "📈 1 cell drifted" in render_summary(report)
    failing = diff(base, head, skiplists, drift_rule=DriftRule(fails=True))
    assert (failing.verdict, failing.headline) == ("failure", "1 cell drifted beyond the thresholds")
    assert "the verdict counts them (drift-fails)" in render_comment(failing)


@pytest.mark.parametrize(
    "line",
    [
        {"cell": CELL.id, "figure": "peak_rss_bytes", "base": 1, "head": 2},
        {"cell": CELL.id, "figure": ERROR, "base": -1, "head": 2},
        {"cell": CELL.id, "figure": ERROR, "base": 1, "head": True},
        {"cell": "not a cell", "figure": ERROR, "base": 1, "head": 2},
        {"cell": CELL.id, "figure": ERROR, "base": 1},
    ],
)
def test_a_forged_drift_line_is_refused(tmp_path, line):
    document = diff(None, ResultSet({CELL: passed()}), load_skiplists(tmp_path)).to_json()
    document["drift"] = [line]
    with pytest.raises(ReportError, match="drift"):
        Report.from_json(document)
    document["drift"] = [dict(line, cell=CELL.id, figure=ERROR, base=1, head=2)] * 501
    with pytest.raises(ReportError, match="at most 500"):
        Report.from_json(document)


def test_drift_reads_the_figures_mains_baseline_kept(tmp_path):
    from bot.results import read_results
    from bot.results.baseline import Segment, at, fold, measured
    from bot.results.baseline_json import dumps, loads
    from tests.results.factory import Case, junit

    main = tmp_path / "main.xml"
    figures = {"compared": "values", "figure.max_abs_error": "1e-06", "figure.tolerance_ratio": "0.001"}
    main.write_text(junit([Case(CELL.id, extra={**figures, "time.export": "2.000"})]))
    sha = "a" * 40
    state = measured(read_results([main]), commit=sha, time="2026-12-04T08:00:00Z", run_id=1, source="push",
                     segment=Segment(None, (sha,), 1))  # fmt: skip
    base, _ = at(loads(dumps(fold(state)), where="baseline.json"), sha, now="2026-12-04T09:00:00Z", stale_days=7)
    head = ResultSet({CELL: passed(2e-4, 0.8, export=11.0)})
    report = diff(base, head, load_skiplists(tmp_path))
    assert sorted((line.figure, line.base, line.head) for line in report.drift) == [
        (EXPORT_SECONDS, 2.0, 11.0), (ERROR, 1e-6, 2e-4)
    ]  # fmt: skip


def artifact(size: float, delegated: float | None = None) -> CellResult:
    properties = [("figure.artifact_bytes", f"{size:.0f}")]
    if delegated is not None:
        properties.append(("figure.delegated_nodes", f"{delegated:.0f}"))
    return CellResult(CELL, Status.PASSED, properties=tuple(properties))


@pytest.mark.parametrize(
    ("base", "head", "moved"),
    [
        (artifact(100_000), artifact(125_000), ["artifact_bytes"]),  # +25 %
        (artifact(100_000), artifact(115_000), []),  # +15 %
        (artifact(100_000, 83), artifact(100_000, 40), ["delegated_nodes"]),  # half the ops left the delegate
        (artifact(100_000, 83), artifact(100_000, 90), []),
    ],
)
def test_artifact_growth_and_lost_delegation_drift(base, head, moved):
    found = drift({CELL: base}, {CELL: head}, DriftRule())
    assert [line.figure for line in found] == moved


def test_a_report_line_carries_its_cells_figures_and_refuses_forged_ones(tmp_path):
    head = ResultSet({CELL: passed(2e-5, 0.02, export=1.5)})
    report = diff(None, head, load_skiplists(tmp_path))
    (line,) = report.cells
    assert dict(line.figures) == {"max_abs_error": 2e-5, "tolerance_ratio": 0.02, "export_seconds": 1.5}
    document = json.loads(json.dumps(report.to_json()))
    assert document["cells"][0]["figures"]["export_seconds"] == 1.5
    assert Report.from_json(document).cells == report.cells
    for forged in ({"peak": 1.0}, {"max_abs_error": -1}, {"max_abs_error": "1"}, [1, 2]):
        document["cells"][0]["figures"] = forged
        with pytest.raises(ReportError, match="figures"):
            Report.from_json(document)


def test_a_checkout_test_that_got_slower_says_so_in_its_own_words():
    line = DriftLine(CELL.id, TEST_SECONDS, 2.5, 8.5)
    assert describe(line) == "the checkout's test 2.5 s → 8.5 s (×3.4)"
