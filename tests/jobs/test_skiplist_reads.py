"""Each command reads its skiplist files exactly once, and every stage gets them from that one read."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import bot.files
from bot.cli import main
from bot.diff.model import write_report
from bot.jobs.check import CheckOptions, run_check
from bot.run.plan import RunPlan
from bot.settings import Settings
from bot.skiplist.model import FILES
from tests.propose.helpers import outcomes, report, row, skiplists_dir
from tests.results.factory import Case, junit

SKIPS = '[onnx]\nFooModel = "Does not export to ONNX."\n'


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """Skiplist file name → how often it was read: every reader of a file goes through bot.files.read_bytes."""
    counted: Counter = Counter()
    read_bytes = bot.files.read_bytes

    def counting(path, *args, **kwargs):
        if Path(path).name in FILES:
            counted[Path(path).name] += 1
        return read_bytes(path, *args, **kwargs)

    monkeypatch.setattr(bot.files, "read_bytes", counting)
    return counted


ONCE = dict.fromkeys(FILES, 1)


def invoke(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_check_reads_once_for_planning_the_diff_and_the_proposal(tmp_path, monkeypatch, reads):
    def run_plan(plan: RunPlan, junit_path: Path, workers) -> None:  # the cells "ran": BertModel's first fails
        cases = [Case(c.id, "failed" if i == 0 else "passed", "RuntimeError: x") for i, c in enumerate(plan.cells)]
        junit_path.write_text(junit(cases), encoding="utf-8")

    monkeypatch.setattr("bot.jobs.check.run_plan", run_plan)
    folder = skiplists_dir(tmp_path, SKIPS)
    options = CheckOptions(
        models=("BertModel",),
        preset=None,
        backends=("onnx",),
        skiplists=folder,
        out=tmp_path / "out",
        settings=Settings(),
    )
    outcome = run_check(options, echo=lambda line: None)
    assert outcome.report.proposal is not None and outcome.report.proposal.entries  # planned, judged, proposed
    assert dict(reads) == ONCE


def test_diff_reads_once(tmp_path, reads):
    folder = skiplists_dir(tmp_path, SKIPS)
    head = tmp_path / "head.xml"
    head.write_text(junit([Case("FooModel::test_onnx_export_static", "failed", "RuntimeError: x")]), encoding="utf-8")
    result = invoke("diff", "--head", head, "--skiplists", folder, "--json", tmp_path / "report.json")
    assert result.exit_code in (0, 1), result.output
    assert dict(reads) == ONCE


def test_propose_reads_once(tmp_path, reads):
    folder = skiplists_dir(tmp_path, SKIPS)
    path = tmp_path / "report.json"
    write_report(report(outcomes(row("BarModel"), lambda c: c.backend == "onnx")), path)
    result = invoke("propose", "--report", path, "--skiplists", folder, "--apply")
    assert result.exit_code == 0 and "+BarModel" in result.output, result.output
    assert dict(reads) == ONCE  # the files --apply rewrote are not read back


def test_skiplist_explain_reads_once(tmp_path, reads):
    folder = skiplists_dir(tmp_path, SKIPS)
    cells = ("FooModel::test_onnx_export_static", "FooModel::test_onnx_export_dynamic")
    result = invoke("skiplist", "explain", *cells, "--skiplists", folder)
    assert result.exit_code == 0 and "skipped by scope `onnx`" in result.output, result.output
    assert dict(reads) == ONCE


def test_skiplist_lint_reads_once(tmp_path, reads):
    folder = skiplists_dir(tmp_path, SKIPS)
    result = invoke("skiplist", "lint", folder)
    assert result.exit_code == 0, result.output
    assert dict(reads) == ONCE
