"""`report`, `diff` and `check` build their report inputs alike: what the settings decide comes from the settings."""

from __future__ import annotations

from pathlib import Path

from bot.jobs.report import ReportInputs, drift_rule
from bot.settings import Settings


def test_the_settings_decide_age_flakiness_drift_and_source():
    settings = Settings(source="transformers-tests:/src", stale_days=3.0, flaky_window=4, drift_time_factor=9.0)
    inputs = ReportInputs.under(settings, head=(Path("head.xml"),))
    assert (inputs.source, inputs.stale_days, inputs.flaky_window) == ("transformers-tests:/src", 3.0, 4)
    assert inputs.drift == drift_rule(settings) and inputs.drift.time_factor == 9.0


def test_what_the_job_gives_wins_over_the_settings():
    # `check` names the source its plan ran, which may be a --checkout rather than the settings' source.
    inputs = ReportInputs.under(Settings(source="zoo"), head=(), source="transformers-tests:/co", stale_days=1.0)
    assert (inputs.source, inputs.stale_days) == ("transformers-tests:/co", 1.0)


def test_cells_on_a_backend_the_repository_does_not_gate_on_are_not_expected(tmp_path):
    """`run` leaves a selection's cells on other backends out ([tool.export-bot] backends): they are not missing."""
    from bot.cells import Cell
    from bot.jobs.report import ReportOutputs, Selected, make_report
    from bot.skiplist.model import read_skiplists
    from tests.results.factory import Case, junit

    torch, onnx = "BertModel::test_torch_export_static", "BertModel::test_onnx_export_static"
    (tmp_path / "head.xml").write_text(junit([Case(torch)], shard="1/1"))
    (tmp_path / "skiplists").mkdir()
    selected = Selected("2 cells", {Cell.parse(torch), Cell.parse(onnx)}, split=((torch, onnx),))
    for settings, verdict in ((Settings(backends=("dynamo",)), "success"), (Settings(), "neutral")):
        inputs = ReportInputs.under(settings, head=(tmp_path / "head.xml",), selected=selected)
        found = make_report(inputs, ReportOutputs(), read_skiplists(tmp_path / "skiplists")).report
        assert found.verdict == verdict
        assert [line.cell for line in found.category("missing")] == ([] if verdict == "success" else [onnx])
