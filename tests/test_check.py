"""`export-bot check`: the main job in one command, on real (tiny) cells, and its usage errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.report import load_report
from tests.conftest import ROOT
from tests.results.factory import Case, junit


def test_base_and_models_do_not_mix():
    result = CliRunner().invoke(main, ["check", "--base", "main", "--models", "BertModel"])
    assert result.exit_code == 2 and "leave out --models" in result.output


def test_an_unknown_model_source_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(main, ["check", "--source", "nowhere:x", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output


@pytest.mark.export
def test_check_runs_diffs_confirms_and_writes_its_files(tmp_path):
    # Main passed both cells; here the static one "broke" on main's side only in the baseline's
    # eyes: we claim main *failed* it, so the real pass is newly passing, and the verdict is green.
    base = tmp_path / "base.xml"
    base.write_text(junit([Case("BertModel::test_torch_export_static", "failed", "RuntimeError: old", stage="export")]))
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "bot",
        "check",
        "--models",
        "BertModel",
        "--backends",
        "dynamo",
        "--shapes",
        "static",
        "-n",
        "0",
        "--base-junit",
        str(base),
        "--out",
        str(out),
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("<!-- export-bot:conformance -->")
    report = load_report(out / "report.json")
    assert report.verdict == "success" and report.baseline
    assert [line.cell for line in report.category("newly_passing")] == ["BertModel::test_torch_export_static"]
    assert {p.name for p in out.iterdir()} >= {"report.json", "comment.md", "summary.md", "junit.xml"}
    assert json.loads((out / "report.json").read_text())["proposal"] is not None
    assert "verdict: success" in result.stderr


def test_settings_come_from_one_pyproject_and_planning_uses_them(tmp_path, monkeypatch):
    from bot.check import CheckOptions, _plan
    from bot.settings import Settings

    # The working folder's pyproject says 1000 s; the settings the command chose say 7 s.
    (tmp_path / "pyproject.toml").write_text("[tool.export-bot]\ncell-timeout = 1000\n")
    monkeypatch.chdir(tmp_path)
    options = CheckOptions(
        models=("BertModel",),
        preset=None,
        backends=("onnx",),
        skiplists=ROOT / "skiplists",
        settings=Settings(cell_timeout=7.0),
    )
    plan = _plan(options, tmp_path, echo=lambda line: None)
    assert plan.cell_timeout == 7.0 and plan.cells


def test_check_reads_the_settings_of_its_repo(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[tool.export-bot]\ncell-timeout = -1\n")
    monkeypatch.chdir(tmp_path)  # no pyproject here: before, planning read this folder's
    result = CliRunner().invoke(main, ["check", "--repo", str(repo), "--models", "BertModel", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert f"{repo / 'pyproject.toml'}: [tool.export-bot] cell-timeout must be above 0" in result.output
    config = tmp_path / "other.toml"
    config.write_text("[tool.export-bot]\nmin-passes = 0\n")
    result = CliRunner().invoke(main, ["check", "--repo", str(repo), "--config", str(config), "--models", "BertModel"])
    assert result.exit_code == 2 and f"{config}: [tool.export-bot] min-passes" in result.output
