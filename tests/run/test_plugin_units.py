"""The plugin's pure parts: testcase properties, crash-or-timeout, run plans, progress and summary, CLI usage errors."""

from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

from bot.cells import Cell
from bot.cli import main
from bot.outcomes import Status
from bot.run.controller import crash_kind
from bot.run.execute import CellRun, ComponentRun
from bot.run.junit import cell_properties, read_timings, run_properties, suite_properties
from bot.run.plan import PlanError, RunPlan, read_plan
from bot.run.progress import Progress, ProgressWriter, format_seconds, summary_table

GENERATE = Cell("LlamaForCausalLM", "executorch", "dynamic", "generate", "static", "xnnpack")
FORWARD = Cell("BertModel", "onnx", "static")


def test_cell_properties_name_every_field_that_is_set():
    assert dict(cell_properties(GENERATE, probe=True)) == {
        "backend": "executorch",
        "shape": "dynamic",
        "path": "generate",
        "cache": "static",
        "target": "xnnpack",
        "probe": "true",
    }
    assert dict(cell_properties(FORWARD)) == {"backend": "onnx", "shape": "static", "path": "forward", "probe": "false"}


def test_failed_run_records_stage_components_and_timings():
    run = CellRun(
        GENERATE,
        Status.FAILED,
        stage="export",
        message="RuntimeError: boom",
        skip_scope="executorch",
        probe=True,
        components=(ComponentRun("prefill", "passed"), ComponentRun("decode", "failed", "RuntimeError: boom")),
        timings={"build": 0.25, "export": 3.0},
    )
    props = dict(run_properties(run))
    assert props == {
        "components": "prefill,decode",
        "component.prefill": "passed",
        "component.decode": "failed",
        "skip_scope": "executorch",
        "stage": "export",
        "time.build": "0.250",
        "time.export": "3.000",
    }
    assert read_timings(run_properties(run)) == {"build": 0.25, "export": 3.0}


def test_passing_run_keeps_component_names_only_and_the_optimize_toggle():
    run = CellRun(FORWARD, Status.PASSED, components=(ComponentRun("model", "passed"),), onnx_optimize=False)
    assert dict(run_properties(run)) == {"components": "model", "onnx_optimize": "false"}


def test_suite_properties():
    props = suite_properties(source="zoo", shard="1/4", versions={"torch": "2.13.0"}, git_sha="abc")
    assert props == [("version.torch", "2.13.0"), ("source", "zoo"), ("shard", "1/4"), ("git_sha", "abc")]
    assert ("shard", None) not in suite_properties(source="zoo", shard=None, versions={}, git_sha=None)


def test_a_worker_dead_past_its_deadline_on_that_cell_timed_out(tmp_path):
    state = tmp_path / "gw0.json"
    state.write_text(json.dumps({"nodeid": FORWARD.id, "deadline": 100.0, "timeout": 30.0}))
    assert crash_kind(state, FORWARD.id, now=100.2) == ("timeout", 30.0)
    assert crash_kind(state, FORWARD.id, now=50.0) == ("crash", None)  # died early: a native crash
    assert crash_kind(state, GENERATE.id, now=200.0) == ("crash", None)  # the deadline was another cell's
    assert crash_kind(tmp_path / "missing.json", FORWARD.id, now=200.0) == ("crash", None)


def test_plan_round_trips_and_rejects_bad_files(tmp_path):
    plan = RunPlan(
        cells=(FORWARD, GENERATE),
        source="zoo",
        probe=True,
        shard="2/3",
        cell_timeout=5,
        durations={FORWARD.id: 2.5, "Other::test_torch_export_static": 1.0},
    )
    path = plan.write(tmp_path / "run.cells.json")
    again = read_plan(path)
    assert again.cells == plan.cells and again.probe and again.shard == "2/3" and again.durations == {FORWARD.id: 2.5}
    path.write_text(json.dumps({"version": 1, "cells": ["BertModel::test_tflite_export_static"]}))
    with pytest.raises(PlanError, match="run.cells.json"):
        read_plan(path)


def test_progress_line_counts_failures_and_estimates_time_left():
    third = Cell.parse("BertModel::test_torch_export_static")
    fourth = Cell.parse("ViTModel::test_onnx_export_static")
    estimates = {FORWARD.id: 10.0, GENERATE.id: 30.0, third.id: 10.0, fourth.id: 40.0}
    progress = Progress((FORWARD, GENERATE, third, fourth), estimates, started=0.0)
    assert "estimating" in progress.line(now=1.0)
    # Two workers start 15 s in (the start-up no cell pays again); nothing has finished: no guess.
    progress.start(FORWARD, now=15.0)
    progress.start(third, now=15.0)
    assert "estimating" in progress.line(now=20.0)
    # FORWARD took 10 s, as estimated. The other ONNX forward cell will take what FORWARD took (10 s,
    # not its estimate of 40); the generate cell its estimate (30 s); the running one 10 s, 10 of
    # them done. 40 s of work over the 2 workers busy since 15 s in: 20 s.
    progress.record(FORWARD, Status.FAILED, now=25.0)
    assert progress.line(now=25.0) == "[1/4] · 1 failing · 25s elapsed · ~20s left"


def test_progress_learns_each_kinds_time_from_the_finished_cells():
    cells = [Cell.parse(f"M{i}::test_onnx_export_static") for i in range(4)]
    progress = Progress(tuple(cells), {cell.id: 100.0 for cell in cells}, started=0.0)
    progress.start(cells[0], now=0.0)
    progress.record(cells[0], Status.PASSED, now=2.0)
    # Recorded at 100 s each, measured at 2 s: the three left take 6 s on the one worker.
    assert progress.left(2.0) == pytest.approx(6.0)


def test_progress_writes_plain_lines_off_a_terminal_and_a_summary_at_the_end():
    stream = io.StringIO()
    writer = ProgressWriter(Progress((FORWARD, GENERATE), started=0.0), stream, clock=lambda: 5.0)
    writer.update(FORWARD, Status.PASSED)
    writer.update(GENERATE, Status.SKIPPED)
    writer.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("passed: BertModel::test_onnx_export_static") and "\r" not in stream.getvalue()
    assert lines[1].startswith("[2/2] · 0 failing · 5s elapsed")
    assert lines[2].split() == [
        "backend",
        "passed",
        "passed-uncompared",
        "failed",
        "error",
        "skipped",
        "not-buildable",
        "total",
    ]


def test_summary_table_counts_per_backend_and_outcome():
    table = summary_table(
        {FORWARD: Status.PASSED, Cell("BertModel", "onnx", "dynamic"): Status.FAILED, GENERATE: Status.ERROR}
    )
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines() if not line.startswith("-")}
    assert rows["onnx"] == ["1", "0", "1", "0", "0", "0", "2"]
    assert rows["executorch"] == ["0", "0", "0", "1", "0", "0", "1"]
    assert rows["all"] == ["1", "0", "1", "1", "0", "0", "3"]
    assert "dynamo" not in rows and "other" not in rows


def test_summary_table_has_one_other_row_for_cells_off_the_bots_backends():
    eager, aoti = (
        Cell.parse("BertModel::test_precomputed_inputs_match_eager"),
        Cell.parse("BertModel::test_aoti_export_static"),
    )
    table = summary_table({FORWARD: Status.PASSED, eager: Status.FAILED, aoti: Status.SKIPPED})
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines() if not line.startswith("-")}
    assert rows["other"] == ["0", "0", "1", "0", "1", "0", "2"]
    assert rows["all"][-1] == "3"


def test_format_seconds():
    assert [format_seconds(s) for s in (0, 59.6, 61, 3700)] == ["0s", "1m00s", "1m01s", "1h01m"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--preset", "nightly"], "--preset 'nightly': unknown preset"),
        (["--backends", "onnx,tflite"], "--backends: unknown 'tflite'"),
        (["--shard", "0/4"], "--shard '0/4'"),
        (["--source", "hub"], "--source 'hub': unknown model source"),
        (["-n", "many"], "a number of workers"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(args, message):
    result = CliRunner().invoke(main, ["run", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_the_summary_warns_of_test_names_the_bot_cannot_read():
    from bot.cells import Cell
    from bot.outcomes import Status
    from bot.run.progress import summary_table

    unread = Cell.from_testcase("BertModel", "test_onnx_export_sharded", lenient=True)
    precomputed = Cell.parse("BertModel::test_precomputed_inputs_match_eager")
    table = summary_table({unread: Status.PASSED, precomputed: Status.PASSED})
    assert table.splitlines()[-1] == (
        "warning: 1 test name(s) the bot cannot read, run and reported by name (row `other`): test_onnx_export_sharded"
    )
    assert "warning" not in summary_table({precomputed: Status.PASSED})


def test_workers_share_the_processs_cores_out_as_torch_threads(monkeypatch):
    from bot.run import session

    monkeypatch.setattr(session.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert [session.threads_per_worker(n) for n in (1, 2, 3, 4, 8)] == [4, 2, 1, 1, 1]
    assert session.threads_per_worker("auto") == 1  # `-n auto`: a worker per core (export-bot bisect's default)
    monkeypatch.delattr(session.os, "sched_getaffinity", raising=False)  # macOS, Windows
    monkeypatch.setattr(session.os, "cpu_count", lambda: 2)
    assert session.threads_per_worker(2) == 1
