"""The diff of docs/diff.md by table: every category, the verdict, reruns, no baseline, incomplete results."""

from __future__ import annotations

import pytest

from bot.cells import Cell
from bot.diff import diff
from bot.outcomes import CellResult, Status
from bot.results import Problem, ResultSet
from bot.skiplist.model import load_skiplists

CELL = Cell.parse("BertModel::test_onnx_export_dynamic")
OTHER = Cell.parse("ViTModel::test_torch_export_static")
SKIPPED_CELL = Cell.parse("GroundingDinoModel::test_onnx_export_dynamic")  # listed in onnx.dynamic below
TOML = """# ONNX, dynamic-shape only.
["onnx.dynamic"]
GroundingDinoModel = "Retrace bug under dynamic shapes."
"""


@pytest.fixture
def skiplists(tmp_path):
    (tmp_path / "export_skips.toml").write_text(TOML, encoding="utf-8")
    return load_skiplists(tmp_path)


def result(status: str, cell: Cell = CELL, **fields) -> CellResult:
    defaults = {"failed": {"stage": "export", "message": "RuntimeError: boom"}, "error": {"kind": "crash"}}
    return CellResult(cell, Status(status), **{**defaults.get(status, {}), **fields})


def results(*items: CellResult, problems=()) -> ResultSet:
    return ResultSet({r.cell: r for r in items}, problems=tuple(problems))


def category_of(report, cell: Cell = CELL) -> str | None:
    found = [name for name, lines in report.categories.items() for line in lines if line.cell == cell.id]
    assert len(found) <= 1, f"{cell.id} is in several categories: {found}"
    return found[0] if found else None


@pytest.mark.parametrize(
    "base, head, expected",
    [
        ("passed", "failed", "newly_broken"),
        ("passed", "error", "newly_broken"),
        ("passed-uncompared", "failed", "newly_broken"),
        ("failed", "passed", "newly_passing"),
        ("error", "passed-uncompared", "newly_passing"),
        ("failed", "failed", "still_failing"),
        ("error", "failed", "still_failing"),
        (None, "failed", "new_failing"),
        (None, "error", "new_failing"),
        (None, "passed", "new_passing"),
        ("skipped", "failed", "new_failing"),  # the base did not run it: nothing to compare
        ("skipped", "passed", "new_passing"),
        ("passed", "skipped", "newly_skipped"),
        ("failed", "skipped", "newly_skipped"),
        ("passed", "passed", None),
        ("skipped", "skipped", None),
        (None, "skipped", None),
    ],
)
def test_category_table(skiplists, base, head, expected):
    base_set = results(result(base)) if base else results()
    assert category_of(diff(base_set, results(result(head)), skiplists)) == expected


@pytest.mark.parametrize("base", ["passed", "failed", "skipped", None])
def test_a_cell_missing_from_head_is_not_run_never_newly_passing(skiplists, base):
    """Without a selection (a sweep) a base cell the head lacks is not run, as before: said, not judged."""
    base_set = results(result(base)) if base else results()
    report = diff(base_set, results(result("passed", OTHER)), skiplists)
    assert category_of(report) == ("not_run" if base else None)
    assert report.category("newly_passing") == () and report.verdict == "success"


@pytest.mark.parametrize("base", ["passed", None])
def test_a_head_with_no_cell_is_never_a_success_even_without_a_selection(skiplists, base):
    report = diff(results(result(base)) if base else None, results(), skiplists)
    assert (report.verdict, report.no_cells, report.selected) == ("neutral", True, None)
    assert report.headline == "no cell in the head's results (no testcase at all); no verdict"


@pytest.mark.parametrize("base", ["passed", "failed", "skipped", None])
def test_a_skiplisted_cell_passing_in_probe_is_an_obsolete_skip(skiplists, base):
    head = results(result("passed", SKIPPED_CELL, probe=True, skip_scope="onnx.dynamic"))
    base_set = results(result(base, SKIPPED_CELL)) if base else results()
    report = diff(base_set, head, skiplists)
    assert category_of(report, SKIPPED_CELL) == "obsolete_skip"
    assert report.category("obsolete_skip")[0].skip_scope == "onnx.dynamic"


def test_a_skiplisted_cell_failing_in_probe_is_no_breakage(skiplists):
    head = results(result("failed", SKIPPED_CELL, probe=True, skip_scope="onnx.dynamic"))
    report = diff(results(result("passed", SKIPPED_CELL)), head, skiplists)
    assert category_of(report, SKIPPED_CELL) is None and report.verdict == "success"


def test_newly_broken_uncovered_fails_the_verdict_and_awaits_a_rerun(skiplists):
    report = diff(results(result("passed")), results(result("failed")), skiplists)
    assert report.verdict == "failure" and report.needs_rerun == (CELL.id,)
    [line] = report.category("newly_broken")
    assert (line.stage, line.message, line.base_status, line.covered_by) == (
        "export",
        "RuntimeError: boom",
        "passed",
        None,
    )


def test_newly_broken_covered_by_a_head_skip_does_not_fail_the_verdict(skiplists):
    report = diff(results(result("passed", SKIPPED_CELL)), results(result("failed", SKIPPED_CELL)), skiplists)
    [line] = report.category("newly_broken")
    assert line.covered_by == "onnx.dynamic" and report.verdict == "success"


def test_a_compare_failure_covered_by_an_exactness_scope_does_not_fail(tmp_path):
    (tmp_path / "export_skips.toml").write_text('["onnx.exactness"]\nBertModel = "fp drift"\n', encoding="utf-8")
    head = results(result("failed", stage="compare"))
    report = diff(results(result("passed")), head, load_skiplists(tmp_path))
    assert report.category("newly_broken")[0].covered_by == "onnx.exactness" and report.verdict == "success"


def test_a_rerun_that_disagrees_makes_the_cell_flaky(skiplists):
    report = diff(results(result("passed")), results(result("failed")), skiplists, rerun=results(result("passed")))
    assert category_of(report) == "flaky" and report.verdict == "success" and report.needs_rerun == ()


def test_a_rerun_that_agrees_confirms_the_break(skiplists):
    report = diff(results(result("passed")), results(result("failed")), skiplists, rerun=results(result("failed")))
    assert category_of(report) == "newly_broken" and report.needs_rerun == () and report.verdict == "failure"


def test_crashes_and_timeouts_are_flagged_beside_failures(skiplists):
    timeout = Cell.parse("BertModel::test_torch_export_static")
    head = results(result("error", kind="crash"), result("error", timeout, kind="timeout"))
    report = diff(None, head, skiplists)
    assert set(report.infrastructure) == {CELL.id, timeout.id}
    assert {line.kind for line in report.category("new_failing")} == {"crash", "timeout"}


def test_no_baseline_is_judged_against_the_skiplists_alone(skiplists):
    covered = diff(None, results(result("failed", SKIPPED_CELL), result("passed")), skiplists)
    assert not covered.baseline and covered.verdict == "success" and "no baseline" not in covered.headline
    assert {category_of(covered, SKIPPED_CELL), category_of(covered)} == {"new_failing", "new_passing"}
    clean = diff(None, results(result("passed")), skiplists)
    assert clean.verdict == "success" and "no baseline" in clean.headline
    uncovered = diff(None, results(result("failed")), skiplists)
    assert uncovered.verdict == "failure" and uncovered.needs_rerun == ()


@pytest.mark.parametrize("where", ["head", "base", "rerun"])
def test_any_problem_makes_the_verdict_neutral(skiplists, where):
    problem = Problem("shard-2.xml", 7, "truncated or malformed XML", "re-run the job")
    sets = {name: results(result("passed")) for name in ("head", "base", "rerun")}
    sets[where] = results(result("passed"), problems=[problem])
    report = diff(sets["base"], sets["head"], skiplists, rerun=sets["rerun"])
    assert report.verdict == "neutral" and report.problems == (problem,) and "incomplete" in report.headline


def test_a_confirmed_failure_stays_a_failure_when_results_are_also_incomplete(skiplists):
    head = results(result("failed"), problems=[Problem("(shard 2/2)", None, "shard 2/2 is missing", "re-run it")])
    assert diff(results(result("passed")), head, skiplists).verdict == "failure"


def test_counts_per_backend_and_shape_and_compact_head_cells(skiplists):
    torch = Cell.parse("BertModel::test_torch_export_static")
    head = results(
        result("failed"), result("passed", torch), result("skipped", SKIPPED_CELL, skip_scope="onnx.dynamic")
    )
    report = diff(None, head, skiplists, head_sha="f00", base_sha="ba5e", run_url="https://example.invalid/run/1")
    assert report.counts == {"dynamo/static": {"passed": 1}, "onnx/dynamic": {"failed": 1, "skipped": 1}}
    assert [line.cell for line in report.cells] == sorted(c.id for c in (CELL, torch, SKIPPED_CELL))
    assert {line.cell: line.skip_scope for line in report.cells}[SKIPPED_CELL.id] == "onnx.dynamic"
    assert (report.head_sha, report.base_sha, report.run_url) == ("f00", "ba5e", "https://example.invalid/run/1")


@pytest.mark.parametrize("head, expected", [("skipped", None), ("failed", "new_failing"), ("passed", "new_passing")])
def test_a_base_probe_is_no_comparable_result(skiplists, head, expected):
    base = results(result("failed", probe=True, skip_scope="onnx"))
    assert category_of(diff(base, results(result(head)), skiplists)) == expected


def test_not_buildable_cells_have_their_own_category_and_no_verdict(skiplists):
    reason = "the zoo has no recipe for {}; add one"
    qa = Cell.parse("LlamaForQuestionAnswering::test_torch_export_static")
    tok = Cell.parse("LlamaForTokenClassification::test_onnx_export_static")
    gone = Cell.parse("LlamaForTokenClassification::test_onnx_export_dynamic")
    base = results(
        result("passed"),
        result("passed", qa),
        result("not-buildable", tok),  # nothing on the base either
        result("not-buildable", gone, message=reason.format(gone.model_class)),
    )
    head = results(
        result("passed"),
        result("not-buildable", qa, message=reason.format(qa.model_class)),
        result("not-buildable", tok, message=reason.format(tok.model_class)),
    )
    report = diff(base, head, skiplists)
    assert report.verdict == "success" and report.headline == "no newly broken cells"
    assert category_of(report, qa) == category_of(report, tok) == "not_buildable"
    # Not infrastructure, not "not run", not a re-run: the source cannot build the class at all.
    assert report.infrastructure == () and report.needs_rerun == () and category_of(report, gone) is None
    assert report.counts["dynamo/static"] == {"not-buildable": 1}
    (group,) = report.not_buildable
    assert group.reason == "the zoo has no recipe for it; add one"
    assert group.classes == ("LlamaForQuestionAnswering", "LlamaForTokenClassification") and group.cells == 2
    assert report.to_json()["not_buildable"] == [{"reason": group.reason, "classes": list(group.classes), "cells": 2}]
    # A head that can build a class the base could not: a new result, not "newly passing".
    assert category_of(diff(head, base, skiplists), qa) == "new_passing"


def test_a_report_keeps_a_collected_test_the_bot_could_not_read():
    """The runner keeps such a test as a cell by its name (docs/cells.md); the report reads it back, never refuses it."""
    from bot.diff.model import Report

    unread = "BertModel::test_onnx_export_sharded"
    report = Report(verdict="failure", headline="h", baseline=False, needs_rerun=(unread,))
    assert Report.from_json(report.to_json()).needs_rerun == (unread,)
