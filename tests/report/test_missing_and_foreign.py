"""The head held against its selection, end to end through `report` and `diff` (docs/outcomes.md, Missing and foreign).

A selected cell with no result is missing: the verdict is neutral (exit 0, said loudly), never success.
A testcase that is not a cell (a plain pytest test) never counts as a pass, and a head holding no cell
at all is neutral with what was expected. The foreign JUnit here is written by a real pytest run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cells import cells_for
from bot.cli import main
from bot.diff.errors import ReportError
from bot.diff.model import Report, load_report
from bot.select.selection_file import write_selection
from tests.results.factory import Case, junit

# 112 cells of the BERT classes (forward cells of 14 classes), as a one-model PR selects them.
CLASSES = ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")
CLASSES += ("ForMultipleChoice", "ForNextSentencePrediction", "ForPreTraining", "LMHeadModel", "ForCausalLM")
CLASSES += ("GenerationModel", "PreTrainedModel", "ForMaskedImageModeling", "ForImageClassification")
SELECTED = [cell for suffix in CLASSES for cell in cells_for(f"Bert{suffix}", generative=False)]
PLAIN_TESTS = """
def test_ok():
    pass


def test_bad():
    assert 1 == 2, "a fork's own test failed"
"""


@pytest.fixture(scope="module")
def plain_junit(tmp_path_factory) -> Path:
    """The JUnit a plain pytest run writes: two tests, one failing, no cell."""
    folder = tmp_path_factory.mktemp("plain")
    (folder / "test_plain.py").write_text(PLAIN_TESTS, encoding="utf-8")
    out = folder / "junit" / "junit.xml"
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_plain.py", f"--junitxml={out}"]
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "1 failed, 1 passed" in done.stdout, done.stdout + done.stderr
    return out


def selection(tmp_path: Path, cells=SELECTED, shards: int = 1) -> Path:
    path = tmp_path / "selection.json"
    split = [[c.id for c in cells[i::shards]] for i in range(shards)]
    write_selection(path, cells, summary=f"{len(cells)} cells of the BERT classes (changed)", shards=split)
    return path


def report(tmp_path: Path, *args: str):
    result = CliRunner().invoke(main, ["report", "--out", str(tmp_path / "out"), *args], catch_exceptions=False)
    written = tmp_path / "out"
    return result, load_report(written / "report.json"), (written / "comment.md").read_text(encoding="utf-8")


def test_one_of_112_selected_cells_present_is_neutral_names_the_missing_and_the_shard(tmp_path):
    head = tmp_path / "head"
    head.mkdir()
    (head / "junit-1.xml").write_text(junit([Case(SELECTED[0].id)], shard="1/1"))
    result, found, comment = report(
        tmp_path, "--selection", str(selection(tmp_path)), "--expect-shards", "1", "--head", str(head)
    )
    assert result.exit_code == 0, result.output  # neutral: exit 0, said loudly (docs/diff.md)
    assert "verdict: neutral: results incomplete: 111 of 112 selected cells have no result" in result.output
    assert found.verdict == "neutral" and found.problems == () and found.selected == 112
    assert [line.cell for line in found.category("missing")] == sorted(c.id for c in SELECTED[1:])
    assert {line.status for line in found.category("missing")} == {"missing"} and found.missing_shards == ("1/1",)
    assert "### ⚠️ No result for 111 of 112 selected cells" in comment and "Re-run shard 1/1" in comment
    assert f"- `{SELECTED[-1].id}`" in comment and "<details><summary>The 111 cells</summary>" in comment
    # `diff` judges alike, and says why it is no pass.
    out = tmp_path / "diff.json"
    args = ["diff", "--head", str(head), "--selection", str(selection(tmp_path)), "--json", str(out)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0 and load_report(out).verdict == "neutral"
    assert "neutral: the results are incomplete (111 selected cells with no result, 0 problems)" in result.output


def test_the_missing_shard_is_named_from_the_selections_split(tmp_path):
    head = tmp_path / "head"
    head.mkdir()
    cells = SELECTED[:16]
    shard_one = [c.id for c in cells[0::2]]  # selection() splits them interleaved
    (head / "junit-1.xml").write_text(junit([Case(cell_id) for cell_id in shard_one], shard="1/2"))
    result, found, comment = report(
        tmp_path, "--selection", str(selection(tmp_path, cells, 2)), "--expect-shards", "2", "--head", str(head)
    )
    assert found.verdict == "neutral" and found.missing_shards == ("2/2",) and len(found.category("missing")) == 8
    assert "Re-run shard 2/2" in comment and "shard 2/2 is missing" in comment


@pytest.mark.parametrize("second", ["passed", "failed"])
def test_a_cell_in_two_shards_is_reported_and_its_failure_is_never_hidden(tmp_path, second):
    head = tmp_path / "head"
    head.mkdir()
    cell = SELECTED[0].id
    (head / "junit-1.xml").write_text(junit([Case(cell)], shard="1/2"))
    (head / "junit-2.xml").write_text(junit([Case(cell, second, "RuntimeError: boom", stage="export")], shard="2/2"))
    sel = selection(tmp_path, [SELECTED[0]])
    result, found, comment = report(tmp_path, "--selection", str(sel), "--expect-shards", "2", "--head", str(head))
    assert found.duplicates == (cell,) and f"{cell} is also in" in comment
    # Both passing: incomplete (neutral); one failing: the failure is what the cell did.
    assert found.verdict == ("failure" if second == "failed" else "neutral")
    assert [line.cell for line in found.category("new_failing")] == ([cell] if second == "failed" else [])


@pytest.mark.parametrize("selected", [True, False])
def test_a_plain_pytest_junit_with_a_failure_and_no_cell_is_no_success(tmp_path, plain_junit, selected):
    args = ["--selection", str(selection(tmp_path))] if selected else []
    result, found, comment = report(tmp_path, *args, "--head", str(plain_junit.parent))
    assert result.exit_code == 0, result.output
    assert found.verdict == "neutral" and found.no_cells and found.cells == ()
    assert found.headline == "no cell in the head's results (2 testcases, none a cell); no verdict"
    assert "### ⚠️ No cell in the results" in comment and "`<testcase>` per cell" in comment
    assert "No cells ran" not in comment and "2 testcases are not cells" in comment
    assert found.non_cells == 2 and set(found.foreign) == {"test_plain::test_ok", "test_plain::test_bad"}


def test_foreign_tests_beside_the_cells_are_listed_and_left_out_of_the_verdict(tmp_path, plain_junit):
    head = tmp_path / "head"
    head.mkdir()
    cells = SELECTED[:4]
    (head / "junit-1.xml").write_text(junit([Case(c.id) for c in cells], shard="1/1"))
    (head / "plain.xml").write_bytes(plain_junit.read_bytes())
    result, found, comment = report(tmp_path, "--selection", str(selection(tmp_path, cells)), "--head", str(head))
    assert found.verdict == "success" and found.category("missing") == () and len(found.cells) == 4
    assert found.non_cells == 2 and not found.no_cells
    assert "ℹ️ 2 testcases are not cells: never a pass, left out of the verdict (" in comment
    assert "test_plain::test_bad" in comment


def test_the_new_fields_round_trip_and_a_forged_one_is_refused(tmp_path):
    fields = {"schema": "export-bot/report@1", "verdict": "neutral", "headline": "x", "selected": 3}
    fields |= {"missing_shards": ["2/3"], "duplicates": [SELECTED[0].id], "foreign": ["a::b"], "no_cells": False}
    found = Report.from_json(fields)
    assert Report.from_json(json.loads(json.dumps(found.to_json()))) == found
    assert (found.selected, found.missing_shards, found.foreign) == (3, ("2/3",), ("a::b",))
    for key, bad in (("missing_shards", ["2/3; rm"]), ("foreign", ["x"] * 11), ("duplicates", ["not a cell"])):
        with pytest.raises(ReportError, match=key):
            Report.from_json({**fields, key: bad})
