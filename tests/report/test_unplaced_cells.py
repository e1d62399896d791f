"""Cells the bot cannot place on one of its backends (a checkout's own tests) are counted, grouped and rendered."""

from __future__ import annotations

import json

from click.testing import CliRunner

from bot.cells import Cell
from bot.cli import main
from bot.diff.model import Report
from bot.report import render_comment, render_summary
from bot.report.markdown import counts_table
from bot.run.junit import cell_properties
from bot.site import NightlyReport, build_data
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit

CHECKOUT = {"judge": "checkout:tests/exporters/test_export.py"}
EAGER = "BertModel::test_precomputed_inputs_match_eager"
AOTI = "BertModel::test_aoti_export_static"
KNOWN = "BertModel::test_torch_export_static"


def _diff(tmp_path, base_cases, head_cases) -> Report:
    files = {}
    for side, cases in (("base", base_cases), ("head", head_cases)):
        files[side] = tmp_path / f"{side}.xml"
        files[side].write_text(junit(cases), encoding="utf-8")
    out = tmp_path / "report.json"
    args = ["diff", "--skiplists", str(SKIPLISTS), "--base", str(files["base"]), "--head", str(files["head"])]
    result = CliRunner().invoke(main, [*args, "--json", str(out)])
    assert result.exit_code in (0, 1), result.output
    return Report.from_json(json.loads(out.read_text("utf-8")))


def test_a_report_with_cells_off_the_bots_backends_renders(tmp_path):
    base = [Case(cell, extra=CHECKOUT) for cell in (KNOWN, EAGER, AOTI)]
    failing = Case(EAGER, "failed", message="AssertionError: Tensor-likes are not close!", extra=CHECKOUT)
    skipped = Case(AOTI, "skipped", message="AOTInductor needs a C++ compiler", extra=CHECKOUT)
    report = _diff(tmp_path, base, [Case(KNOWN, extra=CHECKOUT), failing, skipped])
    assert [line.cell for line in report.category("newly_broken")] == [EAGER]
    assert {key: dict(value) for key, value in report.counts.items()} == {
        "dynamo/static": {"passed": 1},
        "other/other": {"failed": 1},
        "other/static": {"skipped": 1},
    }
    # One `other` row: the unknown backend under its shape, the test with none in the `other` column.
    assert counts_table(report.counts) == [
        "| backend | static | other |",
        "|---|---|---|",
        "| dynamo | ✅ 1 | – |",
        "| other | ⏭️ 1 | ❌ 1 |",
    ]
    comment, summary = render_comment(report), render_summary(report)
    assert "| other | ⏭️ 1 | ❌ 1 |" in comment and "1 class × test_precomputed_inputs_match_eager" in comment
    # No scope is guessed for it: it is named for a skip by hand, with no scope of the bot's walk.
    assert "- `BertModel::test_precomputed_inputs_match_eager`\n" in comment and "```diff" not in comment
    assert "| model class | dynamo st | aoti st | test_precomputed_inputs_match_eager |" in summary
    data = build_data([NightlyReport(report, "r")])
    columns = {column["name"]: column for column in data["columns"]}
    assert [column["name"] for column in data["columns"]] == [
        "test_torch_export_static",
        "test_aoti_export_static",
        "test_precomputed_inputs_match_eager",
    ]
    assert (columns["test_aoti_export_static"]["abbr"], columns["test_aoti_export_static"]["variant"]) == ("aoti", "st")
    assert data["rates"] == [{"dynamo": [1, 1]}]  # the plot draws the bot's backends only


def test_a_test_with_no_backend_is_a_cell_only_where_the_bot_ran_it_for_a_checkout(tmp_path):
    report = _diff(tmp_path, [Case(KNOWN)], [Case(KNOWN), Case(EAGER, "failed")])
    assert [line.cell for line in report.cells] == [KNOWN]  # some other producer's test, as before
    # A worker that died in it wrote only the cell's own properties (bot/run/junit.py): still a cell.
    props = dict(cell_properties(Cell.parse(EAGER)))
    assert props == {"test": "test_precomputed_inputs_match_eager", "path": "forward", "probe": "false"}
    (tmp_path / "crash").mkdir()
    crashed = Case(EAGER, "error", kind="crash", extra={"test": props["test"]})
    report = _diff(tmp_path / "crash", [Case(KNOWN)], [Case(KNOWN), crashed])
    assert {line.cell for line in report.cells} == {KNOWN, EAGER}


def test_the_counts_table_is_unchanged_for_the_bots_own_backends():
    counts = {"dynamo/static": {"passed": 2}, "onnx/dynamic": {"failed": 1}}
    assert counts_table(counts) == [
        "| backend | static | dynamic |",
        "|---|---|---|",
        "| dynamo | ✅ 2 | – |",
        "| onnx | – | ❌ 1 |",
    ]
