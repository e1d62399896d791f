"""`export-bot report`: the report job in one command; exit 0 whatever the verdict, the files it writes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import load_report
from bot.report import COMMENT_MARKER
from tests.results.factory import Case, junit

BERT = "BertModel::test_torch_export_static"
VIT = "ViTModel::test_torch_export_dynamic"


def run(tmp_path: Path, *args: str):
    skiplists = tmp_path / "skiplists"
    skiplists.mkdir(exist_ok=True)
    (skiplists / "export_skips.toml").write_text('["onnx.dynamic"]\nGroundingDinoModel = "retrace bug"\n')
    summary = tmp_path / "step-summary.md"
    argv = ["report", "--skiplists", str(skiplists), "--out", str(tmp_path / "out"), "--summary", str(summary), *args]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


def test_an_empty_selection_is_a_success_that_says_why_without_any_shard(tmp_path):
    selection = tmp_path / "selection.json"
    selection.write_text(json.dumps({"summary": "no export-relevant changes", "cells": []}))
    result = run(tmp_path, "--selection", str(selection), "--head", str(tmp_path / "head"), "--expect-shards", "0")
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "out" / "report.json")
    assert report.verdict == "success" and report.selection == "no export-relevant changes"
    # The headline becomes the status description: it says why nothing ran.
    assert report.headline == "no export-relevant changes"
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert comment.startswith(COMMENT_MARKER) and "no export-relevant changes" in comment
    assert (tmp_path / "step-summary.md").read_text() == (tmp_path / "out" / "summary.md").read_text()


def test_a_failure_is_reported_with_exit_0_and_a_proposal_and_a_missing_base_folder_is_no_baseline(tmp_path):
    head = tmp_path / "head"
    head.mkdir()
    (head / "junit-1.xml").write_text(junit([Case(BERT, "failed", "RuntimeError: boom", stage="export"), Case(VIT)]))
    result = run(tmp_path, "--head", str(head), "--base", str(tmp_path / "base"), "--head-sha", "f" * 40)
    assert result.exit_code == 0, result.output
    assert "verdict: failure" in result.output
    report = load_report(tmp_path / "out" / "report.json")
    assert report.verdict == "failure" and not report.baseline and report.head_sha == "f" * 40
    assert report.proposal and "BertModel" in (tmp_path / "out" / "skiplists.patch").read_text()


def test_a_selection_with_cells_and_no_results_is_exit_2(tmp_path):
    selection = tmp_path / "selection.json"
    selection.write_text(json.dumps({"summary": "1 cell", "cells": [BERT]}))
    result = run(tmp_path, "--selection", str(selection), "--head", str(tmp_path / "head"))
    assert result.exit_code == 2 and "no head results" in result.output


def test_main_s_baseline_seen_through_an_empty_selection_lists_nothing_as_not_run(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "baseline-1.xml").write_text(junit([Case(BERT), Case(VIT)]))
    selection = tmp_path / "selection.json"
    selection.write_text(json.dumps({"summary": "no export-relevant changes", "cells": []}))
    result = run(tmp_path, "--selection", str(selection), "--base", str(base), "--head", str(tmp_path / "head"))
    assert result.exit_code == 0, result.output
    report = load_report(tmp_path / "out" / "report.json")
    assert report.verdict == "success" and not any(report.categories.values())


def test_the_rerun_writes_into_an_out_folder_that_does_not_exist_yet(tmp_path, monkeypatch):
    """The confirming re-run's JUnit and pytest log go into --out before anything else has made it."""
    import bot.jobs.run
    from bot.cells import Cell
    from bot.run.plan import RunPlan

    made = []

    def fake_session(plan, options):
        made.append(options.log.parent.is_dir())
        options.junit.write_text("<testsuite/>", encoding="utf-8")
        return 0

    import bot.run.session

    monkeypatch.setattr(bot.run.session, "run_session", fake_session)
    plan = RunPlan(cells=(Cell.parse("BertModel::test_onnx_export_static"),), source="zoo", skiplists=".")
    bot.jobs.run.run_plan(plan, tmp_path / "new" / "rerun.xml", 0)
    assert made == [True]
