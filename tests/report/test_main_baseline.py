"""`export-bot report --base DIR --merge-base SHA` with main's per-commit baseline (baseline.json) in DIR."""

from __future__ import annotations

import json

import pytest

from bot.cells import Cell
from bot.diff.model import load_report
from bot.outcomes import CellResult, Status
from bot.results import baseline_json
from bot.results.baseline import Baseline, Measurement, Segment
from tests.report.test_command import BERT, VIT, run
from tests.results.factory import Case, junit

GPT = "GPT2Model::test_torch_export_dynamic"
A, B, C = ("a" * 40, "b" * 40, "c" * 40)
FAILED = {"status": "failed", "message": "RuntimeError: boom", "stage": "export"}


def measured(cell_id: str, commit: str, status: str, *, time: str = "2026-12-01T00:00:00+00:00", flipped=False):
    message = "RuntimeError: boom" if status == "failed" else ""
    return Measurement(
        commit, time, 7, "push", CellResult(Cell.parse(cell_id), Status(status), message=message), flipped
    )


def write_state(folder, state: Baseline) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "baseline.json").write_text(baseline_json.dumps(state), encoding="utf-8")


def write_head(tmp_path, *cases: Case):
    head = tmp_path / "head"
    head.mkdir(exist_ok=True)
    (head / "junit-1.xml").write_text(junit(list(cases)))
    return head


# Main: A (the PR's merge base) ← B ← C. BERT passed at A and broke at C; VIT fails at A and since;
# GPT flipped on main (a confirming re-run disagreed twice).
STATE = Baseline(
    segments=(Segment(None, (A,)), Segment(A, (B, C))),
    cells={
        Cell.parse(BERT): (measured(BERT, C, "failed"), measured(BERT, A, "passed", time="2026-11-01T00:00:00+00:00")),
        Cell.parse(VIT): (measured(VIT, C, "failed"), measured(VIT, A, "failed")),
        Cell.parse(GPT): (measured(GPT, C, "passed", flipped=True), measured(GPT, A, "passed", flipped=True)),
    },
)


@pytest.fixture(autouse=True)
def confirmed(monkeypatch):
    """The confirming re-run fails the cells again (the real one exports them: not what these tests are about)."""
    import bot.run.session

    def session(plan, options):
        options.junit.write_text(junit([Case(cell.id, **FAILED) for cell in plan.cells]), encoding="utf-8")
        return 0

    monkeypatch.setattr(bot.run.session, "run_session", session)


@pytest.fixture
def judged(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")  # 2026-12-02: `now` for the age, fixed

    def report(*cases: Case, merge_base: str = A, state: Baseline = STATE):
        write_state(tmp_path / "base", state)
        (tmp_path / "base" / "stray.xml").write_text(junit([Case(BERT, "failed", "RuntimeError: old")]))
        head = write_head(tmp_path, *cases)
        result = run(tmp_path, "--head", str(head), "--base", str(tmp_path / "base"), "--merge-base", merge_base)
        assert result.exit_code == 0, result.output
        return load_report(tmp_path / "out" / "report.json"), (tmp_path / "out" / "comment.md").read_text()

    return report


def test_each_cell_is_judged_at_the_merge_base_and_main_s_own_breakage_is_said_not_blamed(judged):
    report, comment = judged(Case(BERT, **FAILED), Case(VIT, **FAILED), Case(GPT))
    # BERT passed at the merge base but fails in main's newest result: main broke it after the merge
    # base, and the test merge holds that commit, so it is main's break, not this PR's.
    assert report.category("newly_broken") == ()
    assert [line.cell for line in report.category("broken_trunk")] == [BERT, VIT]
    assert report.files["base"] == (str(report.files["base"][0]),) and report.files["base"][0].endswith("baseline.json")
    age = report.baseline_age
    assert (age.newest, age.behind, age.merge_base, age.merge_base_known) == (A, 0, A, True)
    assert "Baseline: main@`aaaaaaa`, at the merge base; 1 cell older than 7 days." in comment
    assert "2 cells fail on main too (in main's newest results)" in comment


def test_a_cell_flipping_on_main_is_flaky_with_its_count_and_the_verdict_does_not_fail(judged):
    report, comment = judged(Case(GPT, **FAILED), Case(VIT, **FAILED))
    assert report.verdict == "success" and report.needs_rerun == ()
    [flaky] = report.category("flaky")
    assert (flaky.cell, flaky.flips) == (GPT, 2)
    assert "(flaky on main: flipped 2× in its last 10 results)" in comment


def test_a_merge_base_newer_than_the_results_says_how_far_behind_and_how_old(judged):
    report, comment = judged(Case(BERT), merge_base=C)
    assert (report.baseline_age.newest, report.baseline_age.behind) == (C, 0)
    state = Baseline(segments=STATE.segments, cells={Cell.parse(BERT): (measured(BERT, A, "passed"),)})
    report, comment = judged(Case(BERT), merge_base=C, state=state)
    assert "Baseline: main@`aaaaaaa`, 2 commits behind the merge base `ccccccc`" in comment


def test_a_merge_base_not_in_the_history_falls_back_to_main_s_newest_and_says_so(judged):
    report, comment = judged(Case(BERT, **FAILED), merge_base="e" * 40)
    assert report.baseline_age.merge_base_known is False
    assert [line.cell for line in report.category("broken_trunk")] == [BERT]
    assert "main's newest results (the merge base `eeeeeee` is not in the baseline's history)" in comment


def test_old_results_are_counted(tmp_path, judged, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1798848000")  # a month later
    report, comment = judged(Case(BERT))
    assert report.baseline_age.old_cells == 3
    assert "; 3 cells older than 7 days." in comment


def test_a_plain_junit_base_folder_is_judged_as_before_and_the_merge_base_is_only_noted(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "baseline-1.xml").write_text(junit([Case(BERT), Case(VIT, **FAILED)]))
    head = write_head(tmp_path, Case(BERT, **FAILED), Case(VIT, **FAILED))
    result = run(tmp_path, "--head", str(head), "--base", str(base), "--merge-base", A)
    assert result.exit_code == 0, result.output
    assert "JUnit only (no baseline.json): judged as is" in result.output
    report = load_report(tmp_path / "out" / "report.json")
    assert report.baseline_age is None and report.category("still_failing")
    assert [line.cell for line in report.category("newly_broken")] == [BERT]
    assert "Baseline: main@" not in (tmp_path / "out" / "comment.md").read_text()


@pytest.mark.parametrize(
    "text, said",
    [
        ('{"format": "export-bot-baseline", "version": 9}', "written by a newer export-bot"),
        ("[" * 50_000, "not a baseline export-bot wrote"),
        (
            json.dumps({"format": "export-bot-baseline", "version": 2, "segments": [{"parent": "x"}]}),
            "not a baseline export-bot wrote",
        ),
    ],
)
def test_a_bad_baseline_json_is_exit_2_in_one_line_and_writes_nothing(tmp_path, text, said):
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "baseline.json").write_text(text)
    head = write_head(tmp_path, Case(BERT))
    result = run(tmp_path, "--head", str(head), "--base", str(tmp_path / "base"), "--merge-base", A)
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize("sha", ["abc123", "z" * 40, "a" * 41])
def test_a_merge_base_that_is_no_full_sha_is_a_usage_error(tmp_path, sha):
    head = write_head(tmp_path, Case(BERT))
    result = run(tmp_path, "--head", str(head), "--merge-base", sha)
    assert result.exit_code == 2 and "full 40-character commit SHA" in result.output


def test_an_empty_merge_base_is_unknown_and_main_s_newest_results_are_the_base(judged):
    report, comment = judged(Case(BERT, **FAILED), merge_base="")
    assert report.baseline_age.merge_base is None and "(no merge base given)" in comment
    assert [line.cell for line in report.category("broken_trunk")] == [BERT]


def test_baseline_json_beside_other_base_results_is_refused(tmp_path):
    write_state(tmp_path / "base", STATE)
    other = tmp_path / "other.xml"
    other.write_text(junit([Case(BERT)]))
    head = write_head(tmp_path, Case(BERT))
    result = run(tmp_path, "--head", str(head), "--base", str(tmp_path / "base"), "--base", str(other))
    assert result.exit_code == 2 and "pass it alone" in result.output


def test_a_base_off_main_s_recorded_history_is_never_said_to_be_at_the_merge_base(judged):
    """Main A ← B, the merge base B; the cell's only result is at D, a commit no push recorded (a force-push
    replaced it): its distance is unknown, and the comment must not claim the base is at the merge base."""
    d = "d" * 40
    state = Baseline(
        segments=(Segment(None, (A,)), Segment(A, (B,))), cells={Cell.parse(VIT): (measured(VIT, d, "passed"),)}
    )
    report, comment = judged(Case(VIT), merge_base=B, state=state)
    assert report.baseline_age.merge_base_known and report.baseline_age.behind is None
    assert "at the merge base" not in comment
    assert (
        "Baseline: main@`ddddddd`, a commit not in main's recorded history, behind the merge base `bbbbbbb`" in comment
    )


def test_a_crash_on_main_does_not_excuse_a_pr_that_breaks_the_cell(judged):
    """Main's newest result of BERT is a worker crash (a runner ran out of memory): it says nothing about
    the export, so a PR breaking BERT is newly broken, not "failing on main too"."""
    crash = CellResult(Cell.parse(BERT), Status.ERROR, kind="crash", message="worker crashed")
    state = Baseline(
        segments=STATE.segments,
        cells={
            Cell.parse(BERT): (Measurement(C, "2026-12-01T00:00:00Z", 8, "push", crash), measured(BERT, A, "passed"))
        },
    )
    report, _ = judged(Case(BERT, **FAILED), state=state)
    assert report.category("broken_trunk") == ()
    assert [line.cell for line in report.category("newly_broken")] == [BERT] and report.verdict == "failure"


def test_a_crash_on_main_after_a_break_leaves_main_broken(judged):
    """BERT broke on main at B; main's newest result, at C, is a crash: main is still broken, so a PR
    failing BERT is failing on main too."""
    crash = CellResult(Cell.parse(BERT), Status.ERROR, kind="crash", message="worker crashed")
    history = (
        Measurement(C, "2026-12-01T00:00:00Z", 8, "push", crash),
        measured(BERT, B, "failed"),
        measured(BERT, A, "passed"),
    )
    report, _ = judged(Case(BERT, **FAILED), state=Baseline(segments=STATE.segments, cells={Cell.parse(BERT): history}))
    assert [line.cell for line in report.category("broken_trunk")] == [BERT] and report.verdict != "failure"
