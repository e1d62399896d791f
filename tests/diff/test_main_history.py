"""A PR judged against main's per-commit baseline: broken trunk, flaky on main, and the baseline's age."""

from __future__ import annotations

import pytest

from bot.cells import Cell
from bot.diff import diff
from bot.diff.compare import MainHistory
from bot.diff.model import BaselineAge, Report
from bot.outcomes import CellResult, Status
from bot.results import ResultSet, baseline, baseline_json
from bot.results.baseline import Baseline, Measurement, Segment
from bot.skiplist.model import Skiplist, Skiplists

BERT = Cell.parse("BertModel::test_torch_export_static")
VIT = Cell.parse("ViTModel::test_onnx_export_dynamic")
GPT = Cell.parse("GPT2Model::test_torch_export_dynamic")
A, B, C, D = ("a" * 40, "b" * 40, "c" * 40, "d" * 40)
AGE = BaselineAge(A, 0, 0, 7.0, A, True, 10)
NONE = Skiplists(Skiplist("export_skips.toml", {}), Skiplist("onnx_disable_optimize.toml", {}))


def result(cell: Cell, status: str = "passed", *, probe: bool = False) -> CellResult:
    message = "RuntimeError: boom" if status in ("failed", "error") else ""
    return CellResult(cell, Status(status), stage="export" if message else None, message=message, probe=probe)


def results(*pairs) -> ResultSet:
    return ResultSet(results={cell: result(cell, status) for cell, status in pairs})


def judged(base, head, *, newest=(), flips=None, rerun=None) -> Report:
    main = MainHistory({cell: result(cell, status) for cell, status in newest}, flips or {}, AGE)
    return diff(results(*base), results(*head), NONE, rerun, main=main)


def test_a_cell_failing_at_the_merge_base_and_on_main_now_is_broken_trunk_and_never_fails_the_verdict():
    report = judged([(BERT, "failed")], [(BERT, "failed")], newest=[(BERT, "failed")])
    assert [line.cell for line in report.category("broken_trunk")] == [BERT.id]
    assert not report.category("still_failing") and report.verdict == "success"


def test_a_cell_main_fixed_since_the_merge_base_stays_a_pre_existing_failure():
    report = judged([(BERT, "failed")], [(BERT, "failed")], newest=[(BERT, "passed")])
    assert [line.cell for line in report.category("still_failing")] == [BERT.id]
    assert not report.category("broken_trunk")


def test_a_probe_on_main_is_no_newest_result_to_call_main_broken():
    main = MainHistory({BERT: result(BERT, "failed", probe=True)}, {}, AGE)
    report = diff(results((BERT, "failed")), results((BERT, "failed")), NONE, main=main)
    assert report.category("still_failing") and not report.category("broken_trunk")


def test_a_newly_broken_cell_that_flips_on_main_is_flaky_with_its_count_and_not_re_run():
    report = judged([(BERT, "passed"), (VIT, "passed")], [(BERT, "failed"), (VIT, "failed")], flips={BERT: 2})
    [flaky] = report.category("flaky")
    assert (flaky.cell, flaky.flips) == (BERT.id, 2)
    assert [line.cell for line in report.category("newly_broken")] == [VIT.id]
    assert report.needs_rerun == (VIT.id,) and report.verdict == "failure"
    assert [cell for group in report.groups for cell in group.cells] == [VIT.id]


def test_flips_alone_never_fail_the_verdict_and_a_new_failing_cell_is_not_excused_by_them():
    report = judged([(BERT, "passed")], [(BERT, "failed"), (GPT, "failed")], flips={BERT: 1, GPT: 3})
    assert [line.cell for line in report.category("flaky")] == [BERT.id]
    assert [line.cell for line in report.category("new_failing")] == [GPT.id]


def test_without_main_s_history_the_diff_is_what_it_was():
    report = diff(results((BERT, "failed")), results((BERT, "failed")), NONE)
    assert report.category("still_failing") and report.baseline_age is None


def test_the_age_and_the_flip_count_round_trip_through_report_json():
    report = judged([(BERT, "passed")], [(BERT, "failed")], flips={BERT: 4})
    again = Report.from_json(report.to_json())
    assert again.baseline_age == AGE and again.category("flaky")[0].flips == 4


# --- the readers of bot/results/baseline.py the report uses, with the semantics of docs/baseline.md -------------


def measured(commit, status="passed", *, cell=BERT, time="2026-12-01T00:00:00+00:00", flipped=False) -> Measurement:
    return Measurement(commit, time, 1, "push", result(cell, status), flipped)


STATE = Baseline(
    segments=(Segment(None, (A, B)), Segment(B, (C,)), Segment(C, (D,))),
    cells={
        BERT: (measured(D, "failed"), measured(B, "passed", time="2026-11-01T00:00:00+00:00")),
        VIT: (measured(C, "failed", cell=VIT),),
    },
)


def test_at_takes_each_cell_s_newest_result_at_or_before_the_merge_base_and_says_how_old_it_is():
    assert baseline.chain(STATE) == (A, B, C, D)
    base, age = baseline.at(STATE, C, now="2026-12-02T00:00:00+00:00", stale_days=7)
    assert base.results[BERT].status is Status.PASSED and base.results[VIT].status is Status.FAILED
    assert (age.newest, age.behind, age.old_cells, age.merge_base_known) == (C, 0, 1, True)
    base, age = baseline.at(STATE, B, now="2026-12-02T00:00:00+00:00", stale_days=7)
    assert set(base.results) == {BERT} and (age.newest, age.behind) == (B, 0)
    base, age = baseline.at(STATE, "e" * 40, now="2026-12-02T00:00:00+00:00", stale_days=7)
    assert base.results[BERT].status is Status.FAILED and (age.merge_base_known, age.behind) == (False, None)
    assert baseline.newest(STATE).results[BERT].status is Status.FAILED


def test_flips_count_disagreeing_re_runs_and_disagreeing_results_at_one_commit_within_the_window():
    flapping = Baseline(
        cells={BERT: (measured(D, "failed", flipped=True), measured(C, "passed"), measured(C, "failed"))}
    )
    assert baseline.flips(flapping, 10) == {BERT: 2}
    assert baseline.flips(flapping, 1) == {BERT: 1}
    assert baseline.flips(STATE, 10) == {}


def test_the_state_file_round_trips_and_anything_else_is_refused_in_one_line():
    once = baseline_json.loads(baseline_json.dumps(STATE), where="b.json")  # times come back normalized (Z)
    assert baseline_json.loads(baseline_json.dumps(once), where="b.json") == once
    assert once.cells[BERT][0].commit == D and once.cells[VIT][0].result.status is Status.FAILED
    for text in ("[]", '{"format": "export-bot-baseline", "version": 1}', "{" * 100_000, '{"format": 1'):
        with pytest.raises(
            baseline_json.BaselineError,
            match=r"^b\.json: .*(delete the artifact|not a baseline|not an export-bot baseline)",
        ):
            baseline_json.loads(text, where="b.json")
