"""`export-bot diff`: exit codes, outputs, broken inputs as a visible neutral verdict, and no torch import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import load_report
from bot.report import COMMENT_MARKER
from tests.results.factory import Case, junit

ROOT = Path(__file__).resolve().parents[2]
BERT = "BertModel::test_onnx_export_static"
VIT = "ViTModel::test_torch_export_dynamic"


@pytest.fixture
def skiplists(tmp_path):
    folder = tmp_path / "skiplists"
    folder.mkdir()
    (folder / "export_skips.toml").write_text('["onnx.dynamic"]\nGroundingDinoModel = "retrace bug"\n')
    return folder


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run(tmp_path, skiplists, head: list[Path], base: list[Path] = (), *extra: str):
    args = [
        "diff",
        "--skiplists",
        str(skiplists),
        "--json",
        str(tmp_path / "report.json"),
        "--markdown",
        str(tmp_path / "comment.md"),
        "--summary",
        str(tmp_path / "summary.md"),
    ]
    for path in head:
        args += ["--head", str(path)]
    for path in base:
        args += ["--base", str(path)]
    return CliRunner().invoke(main, args + list(extra))


def test_failure_exits_1_and_writes_every_output(tmp_path, skiplists):
    base = write(tmp_path / "base.xml", junit([Case(BERT), Case(VIT)]))
    head = write(tmp_path / "head.xml", junit([Case(BERT, "failed", "RuntimeError: boom", stage="export"), Case(VIT)]))
    result = run(tmp_path, skiplists, [head], [base], "--head-sha", "f" * 40, "--run-url", "https://example.invalid/1")
    assert result.exit_code == 1, result.output
    assert "verdict: failure" in result.output and "newly broken 1" in result.output
    report = load_report(tmp_path / "report.json")
    assert report.verdict == "failure" and report.head_sha == "f" * 40 and report.needs_rerun == (BERT,)
    assert (tmp_path / "comment.md").read_text().startswith(COMMENT_MARKER)
    assert "| model class |" in (tmp_path / "summary.md").read_text()


def test_success_exits_0_and_a_rerun_turns_a_break_flaky(tmp_path, skiplists):
    base = write(tmp_path / "base.xml", junit([Case(BERT)]))
    head = write(tmp_path / "head.xml", junit([Case(BERT, "failed", "E: x")]))
    rerun = write(tmp_path / "rerun.xml", junit([Case(BERT)]))
    result = run(tmp_path, skiplists, [head], [base], "--rerun", str(rerun))
    assert result.exit_code == 0, result.output
    assert "verdict: success" in result.output and "flaky 1" in result.output


def test_no_base_is_no_baseline(tmp_path, skiplists):
    head = write(tmp_path / "head.xml", junit([Case(BERT)]))
    result = run(tmp_path, skiplists, [head])
    assert result.exit_code == 0 and "no baseline" in result.output
    assert load_report(tmp_path / "report.json").baseline is False


def _truncated(tmp_path):
    text = junit([Case(BERT), Case(VIT)])
    return [write(tmp_path / "cut.xml", text[: len(text) // 2])], "truncated or malformed XML"


def _empty(tmp_path):
    return [write(tmp_path / "empty.xml", "")], "empty file"


def _missing_shard(tmp_path):
    return [write(tmp_path / "1.xml", junit([Case(BERT)], shard="1/2"))], "shard 2/2 is missing"


def _duplicate(tmp_path):
    return [
        write(tmp_path / "a.xml", junit([Case(BERT)], shard="1/2")),
        write(tmp_path / "b.xml", junit([Case(BERT)], shard="2/2")),
    ], f"{BERT} is also in"


def _not_junit(tmp_path):
    return [write(tmp_path / "other.xml", "<coverage><packages/></coverage>")], "not JUnit XML"


@pytest.mark.parametrize("broken", [_truncated, _empty, _missing_shard, _duplicate, _not_junit])
def test_broken_input_is_a_visible_neutral_verdict(tmp_path, skiplists, broken):
    head, problem = broken(tmp_path)
    base = write(tmp_path / "base.xml", junit([Case(BERT), Case(VIT)]))
    result = run(tmp_path, skiplists, head, [base], "--expect-shards", "2" if broken is not _empty else "1")
    # Neutral exits 0 (the report job must still upload report.json) but says so on stderr.
    assert result.exit_code == 0, result.output
    assert "verdict: neutral" in result.output and "not a pass" in result.output
    assert problem in result.output
    comment = (tmp_path / "comment.md").read_text()
    assert "**neutral**" in comment and problem in comment
    assert load_report(tmp_path / "report.json").verdict == "neutral"


def test_no_head_file_at_all_is_unusable_input(tmp_path, skiplists):
    result = run(tmp_path, skiplists, [tmp_path / "missing.xml"])
    assert result.exit_code == 2 and "no head results" in result.output
    assert CliRunner().invoke(main, ["diff", "--skiplists", str(skiplists)]).exit_code == 2


def test_a_broken_skiplist_is_unusable_input(tmp_path, skiplists):
    (skiplists / "export_skips.toml").write_text("[onnx\n")
    result = run(tmp_path, skiplists, [write(tmp_path / "h.xml", junit([Case(BERT)]))])
    assert result.exit_code == 2 and "export_skips.toml" in result.output


def test_diff_never_imports_torch_or_transformers(tmp_path, skiplists):
    base = write(tmp_path / "base.xml", junit([Case(BERT)]))
    head = write(tmp_path / "head.xml", junit([Case(BERT, "failed", "E: x")]))
    probe = (
        "import sys\nfrom bot.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exit:\n    code = exit.code\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'onnx', 'openvino', 'executorch', 'github') if m in sys.modules)\n"
        "print('HEAVY', heavy, code)\n"
    )
    args = [
        "diff",
        "--skiplists",
        str(skiplists),
        "--base",
        str(base),
        "--head",
        str(head),
        "--json",
        str(tmp_path / "r.json"),
        "--markdown",
        str(tmp_path / "c.md"),
        "--summary",
        str(tmp_path / "s.md"),
    ]
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "HEAVY [] 1" in done.stdout, done.stdout + done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "failure"


def test_an_empty_selection_needs_no_head_and_the_comment_says_why(tmp_path, skiplists):
    selection = write(tmp_path / "selection.json", json.dumps({"summary": "no export-relevant changes", "cells": []}))
    result = run(
        tmp_path,
        skiplists,
        [tmp_path / "head" / "missing.xml"],
        (),
        "--selection",
        str(selection),
        "--expect-shards",
        "4",
    )
    assert result.exit_code == 0, result.output
    assert load_report(tmp_path / "report.json").verdict == "success"
    assert "Selected: no export-relevant changes." in (tmp_path / "comment.md").read_text()


def test_a_selection_with_cells_still_needs_their_results(tmp_path, skiplists):
    selection = write(
        tmp_path / "selection.json", json.dumps({"summary": "2 cells of 1 model classes", "cells": [BERT]})
    )
    result = run(tmp_path, skiplists, [tmp_path / "missing.xml"], (), "--selection", str(selection))
    assert result.exit_code == 2 and "no head results" in result.output
    head = write(tmp_path / "head.xml", junit([Case(BERT)]))
    result = run(tmp_path, skiplists, [head], (), "--selection", str(selection))
    assert result.exit_code == 0
    assert load_report(tmp_path / "report.json").selection == "2 cells of 1 model classes"


def test_a_full_baseline_is_seen_through_the_selection(tmp_path, skiplists):
    # Main's baseline holds every cell; a PR runs its selection only. The rest is not "not run".
    base = write(tmp_path / "base.xml", junit([Case(BERT), Case(VIT)]))
    head = write(tmp_path / "head.xml", junit([Case(BERT)]))
    selection = write(tmp_path / "selection.json", json.dumps({"summary": "1 cell", "cells": [BERT]}))
    assert run(tmp_path, skiplists, [head], [base], "--selection", str(selection)).exit_code == 0
    assert load_report(tmp_path / "report.json").category("not_run") == ()
    assert run(tmp_path, skiplists, [head], [base]).exit_code == 0  # without it, the base's extra cell shows
    assert [line.cell for line in load_report(tmp_path / "report.json").category("not_run")] == [VIT]


def test_a_broken_selection_file_is_one_line_and_exit_2(tmp_path, skiplists):
    head = write(tmp_path / "head.xml", junit([Case(BERT)]))
    selection = write(tmp_path / "selection.json", json.dumps({"summary": "x", "cells": ["BertModel::nope"]}))
    result = run(tmp_path, skiplists, [head], (), "--selection", str(selection))
    assert result.exit_code == 2 and "cells[0]" in result.output


def test_the_selection_s_changed_lines_and_the_workflow_s_repository_reach_the_groups(tmp_path, skiplists, monkeypatch):
    """The recorded real run of tests/report/data: the culprit is marked changed and linked at the head commit."""
    data = ROOT / "tests" / "report" / "data"
    monkeypatch.setenv("GITHUB_REPOSITORY", "huggingface/transformers")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.example")
    out = tmp_path / "report.json"
    args = ["diff", "--skiplists", str(skiplists), "--head", str(data / "guard_head.xml"), "--json", str(out)]
    done = CliRunner().invoke(main, [*args, "--selection", str(data / "guard_selection.json")])
    assert done.exit_code == 1, done.output
    [group] = load_report(out).groups
    modeling = "src/transformers/models/toy/modeling_toy.py"
    assert group.culprit.changed and group.culprit.path == modeling
    assert group.culprit.url.startswith("https://github.example/huggingface/transformers/blob/")
    # Without the selection nothing says which lines the PR changed, and without the repository no link.
    monkeypatch.delenv("GITHUB_REPOSITORY")
    assert CliRunner().invoke(main, args).exit_code == 1
    [group] = load_report(out).groups
    assert (group.culprit.path, group.culprit.changed, group.culprit.url) == (modeling, False, None)
