"""`export-bot check`: the main job in one command, on real (tiny) cells, and its usage errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import load_report
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


@pytest.mark.export
def test_a_llama_pr_runs_every_llama_class_and_a_class_the_zoo_cannot_build_is_said_not_failed(tmp_path):
    """modeling_llama.py changes and adds a head no auto mapping knows (the installed transformers lacks it).

    The zoo builds every class modeling_llama exports (no "no recipe" cells); the new head is
    "not buildable by this source": no 💥, no failed verdict, no skiplist entry.
    """
    from bot.models.index import installed_models_dir

    repo = tmp_path / "transformers"
    llama = repo / "src/transformers/models/llama"
    llama.mkdir(parents=True)
    for name in ("__init__.py", "configuration_llama.py", "modeling_llama.py"):
        (llama / name).write_text((installed_models_dir() / "llama" / name).read_text(encoding="utf-8"))

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    git("checkout", "-q", "-b", "pr")
    modeling = llama / "modeling_llama.py"
    text = modeling.read_text(encoding="utf-8").replace("__all__ = [", '__all__ = [\n    "LlamaForGhost",', 1)
    modeling.write_text(text + "\n\nclass LlamaForGhost(LlamaPreTrainedModel):\n    pass\n", encoding="utf-8")
    git("commit", "-q", "-am", "llama: a new head")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "bot", "check", "--base", "main", "--head", "pr", "--repo", str(repo)]
    command += ["--backends", "dynamo", "--shapes", "static", "--no-generate", "-n", "0", "--out", str(out)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    report = load_report(out / "report.json")
    assert report.verdict == "success", report.headline
    ran = {line.cell.partition("::")[0] for line in report.cells if line.status == "passed"}
    assert {"LlamaModel", "LlamaForCausalLM", "LlamaForQuestionAnswering", "LlamaForTokenClassification"} <= ran
    unbuildable = {line.cell.partition("::")[0] for line in report.category("not_buildable")}
    assert unbuildable == {"LlamaForGhost"}
    assert not report.infrastructure and not report.category("new_failing")
    assert report.proposal is not None and not report.proposal.entries
    assert (out / "skiplists.patch").exists() is False
    comment = (out / "comment.md").read_text(encoding="utf-8")
    assert "🚧 1 cell not buildable by this source" in comment and "💥" not in comment


def test_settings_come_from_one_pyproject_and_planning_uses_them(tmp_path, monkeypatch):
    from bot.jobs.check import CheckOptions, plan_check
    from bot.settings import Settings
    from bot.skiplist.model import read_skiplists

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
    plan, _ = plan_check(options, read_skiplists(options.skiplists), tmp_path, echo=lambda line: None)
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
