"""Who judged the head's cells travels in report.json (`judged_by`) and is one footer line of the comment and summary."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import Report, ReportError
from bot.report import render_comment, render_summary
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit

CHECKOUT = "checkout:tests/exporters/test_export.py"


def report_of(tmp_path, *judges: str) -> dict:
    """report.json of `export-bot diff` on one cell per judge (one cell with no `judge` property when none)."""
    cells = ("BertModel::test_torch_export_static", "T5Model::test_onnx_export_static")
    cases = [Case(cell, extra={"judge": judge}) for cell, judge in zip(cells, judges)] or [Case(cells[0])]
    head = tmp_path / "head.xml"
    head.write_text(junit(cases), encoding="utf-8")
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["diff", "--skiplists", str(SKIPLISTS), "--head", str(head), "--json", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text("utf-8"))


def test_the_zoos_rules_profile_is_in_the_report_and_its_footer(tmp_path):
    data = report_of(tmp_path, "rules:seed-1")
    assert data["judged_by"] == ["rules:seed-1"]
    report = Report.from_json(data)
    line = "Judged by the bot's rules profile `rules:seed-1`."
    assert line in render_comment(report).splitlines() and line in render_summary(report).splitlines()


def test_a_report_from_the_checkouts_tests_says_so(tmp_path):
    report = Report.from_json(report_of(tmp_path, CHECKOUT, "rules:seed-1"))
    assert report.judged_by == (CHECKOUT, "rules:seed-1")
    assert (
        "Judged by the checkout's tests/exporters/test_export.py and the bot's rules profile `rules:seed-1`."
        in render_comment(report).splitlines()
    )
    only = Report.from_json({**report.to_json(), "judged_by": [CHECKOUT]})
    assert "Judged by the checkout's tests/exporters/test_export.py." in render_summary(only).splitlines()


def test_unsaid_means_no_line_and_a_forged_judge_never_reaches_the_report(tmp_path):
    unsaid = report_of(tmp_path)
    assert unsaid["judged_by"] == [] and "Judged by" not in render_comment(Report.from_json(unsaid))
    (tmp_path / "forged").mkdir()
    forged = report_of(tmp_path / "forged", "checkout:x) [click](https://evil.example) @maintainer")
    assert forged["judged_by"] == []  # the writer keeps only what bot/run writes; the reader refuses the rest


@pytest.mark.parametrize(
    "value, message",
    [
        (["@maintainer"], "field `judged_by[0]` must be `rules:PROFILE` or `checkout:PATH`, not '@maintainer'"),
        (["rules:seed-1"] * 9, "field `judged_by` must be at most 8 judges, not 9 of them"),
        ("rules:seed-1", "field `judged_by` must be a list"),
        ([3], "field `judged_by[0]` must be a string"),
    ],
)
def test_the_reader_is_strict(tmp_path, value, message):
    data = {**report_of(tmp_path, "rules:seed-1"), "judged_by": value}
    with pytest.raises(ReportError, match="regenerate it") as raised:
        Report.from_json(data)
    assert message in str(raised.value)
