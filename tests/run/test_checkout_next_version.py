"""A synthetic next version of the checkout's export test module: the bot follows it with no change of its own.

tests/fixtures/transformers_checkout_next changes what upstream's module changes between releases:
a new axis (`…_generate_dynamic_multi_token`), a changed comparison (forward exports compare
shapes, not values) and renamed scopes (`dynamo.dynamic`, `dynamo.generate`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.cells import Cell, placed
from bot.models.sources import get_source
from bot.outcomes import Status
from bot.run.checkout_tests import execute_by_checkout
from bot.run.selection import CellRequest, select_from_source
from tests.run.plugin_helpers import write_skiplists
from tests.run.test_checkout_judge import FIXTURES, add_drifting_model, export_checkout


def _checkout(root: Path, *, next_version: bool) -> Path:
    export_checkout(root)
    if next_version:
        shutil.copytree(FIXTURES / "transformers_checkout_next", root, dirs_exist_ok=True)
    return add_drifting_model(root)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return get_source(f"transformers-tests:{_checkout(tmp_path_factory.mktemp('next') / 'c', next_version=True)}")


def test_the_new_axis_is_listed_under_its_new_name(source):
    cells = select_from_source(CellRequest(models=("LlamaForCausalLM",), backends=("dynamo",)), source)
    names = [cell.name for cell in cells]
    assert "test_torch_export_generate_dynamic_multi_token" in names
    assert "test_torch_export_generate_static_static_cache" not in names  # not a test of this version
    [multi] = [cell for cell in cells if cell.axes]
    assert (multi.backend, multi.shape, multi.path, multi.axes) == ("dynamo", "dynamic", "generate", "multi_token")
    assert Cell.parse(multi.id) == multi


def test_the_bots_own_rules_refuse_an_axis_they_do_not_know(tmp_path):
    from bot.run.execute import execute_cell
    from bot.skiplist.model import load_skiplists

    cell = Cell.parse("LlamaForCausalLM::test_torch_export_generate_dynamic_multi_token")
    folder = write_skiplists(tmp_path / "skiplists")
    run = execute_cell(cell, get_source("zoo"), load_skiplists(folder))
    assert run.status is Status.NOT_BUILDABLE and "multi_token" in run.message


def test_a_renamed_scope_is_the_checkouts_walk_and_the_old_name_is_ignored(source, tmp_path):
    renamed = write_skiplists(tmp_path / "new", '[dynamo.dynamic]\nBertModel = "Dynamic pooler."\n')
    run = execute_by_checkout(Cell.parse("BertModel::test_torch_export_dynamic"), source, renamed)
    assert (run.status, run.message) == (Status.SKIPPED, "EXPORT_SKIPS['dynamo.dynamic']: Dynamic pooler.")
    old = write_skiplists(tmp_path / "old", '[generate]\nLlamaForCausalLM = "A scope this version has not."\n')
    run = execute_by_checkout(Cell.parse("LlamaForCausalLM::test_torch_export_generate_static"), source, old)
    assert run.status is not Status.SKIPPED  # the checkout's walk never reads `generate` any more


@pytest.mark.export
def test_new_cells_are_judged_by_the_new_rule(source, tmp_path):
    empty = write_skiplists(tmp_path / "empty")
    multi = execute_by_checkout(
        Cell.parse("LlamaForCausalLM::test_torch_export_generate_dynamic_multi_token"), source, empty
    )
    assert multi.status is Status.PASSED, multi.message
    assert [c.name for c in multi.components] == ["LlamaForCausalLM/model", "LlamaForCausalLM/decode_multi_token"]
    # Shapes, not values: the drifting model passes this version, and fails the previous one.
    assert (
        execute_by_checkout(Cell.parse("DriftModel::test_torch_export_static"), source, empty).status is Status.PASSED
    )
    previous = get_source(f"transformers-tests:{_checkout(tmp_path / 'previous', next_version=False)}")
    failed = execute_by_checkout(Cell.parse("DriftModel::test_torch_export_static"), previous, empty)
    assert (failed.status, failed.failed_component) == (Status.FAILED, "DriftModel/model")


def test_tests_the_bot_cannot_place_are_listed_from_the_export_module(source):
    cells = select_from_source(CellRequest(models=("BertModel",)), source)
    unplaced = {cell.id: cell for cell in cells if not placed(cell)}
    assert set(unplaced) == {
        "BertModel::test_aoti_export_static",
        "BertModel::test_aoti_export_dynamic",
        "BertModel::test_precomputed_inputs_match_eager",
    }
    assert (
        unplaced["BertModel::test_aoti_export_static"].backend,
        unplaced["BertModel::test_aoti_export_static"].shape,
    ) == ("aoti", "static")
    assert unplaced["BertModel::test_precomputed_inputs_match_eager"].test == "test_precomputed_inputs_match_eager"
    assert all(Cell.parse(cell.id) == cell for cell in cells)
    # The model's own tests (`test_model`, …) are no cells: only the export module's are collected.
    assert all("_export" in cell.name or cell.test for cell in cells)
    # Narrowed to the bot's backends, a test the bot cannot place on one is not selected.
    narrowed = select_from_source(CellRequest(models=("BertModel",), backends=("dynamo", "onnx")), source)
    assert all(placed(cell) for cell in narrowed) and narrowed


def test_tests_the_bot_cannot_place_are_judged_by_the_checkout_only(source, tmp_path):
    from bot.run.execute import execute_cell
    from bot.skiplist.model import load_skiplists

    empty = write_skiplists(tmp_path / "empty")
    aoti = execute_by_checkout(Cell.parse("BertModel::test_aoti_export_static"), source, empty)
    assert (aoti.status, aoti.message) == (
        Status.SKIPPED,
        "AOTInductor needs a C++ compiler this fixture does not assume",
    )
    eager = execute_by_checkout(Cell.parse("BertModel::test_precomputed_inputs_match_eager"), source, empty)
    assert eager.status is Status.PASSED, eager.message
    assert [c.name for c in eager.components] == ["BertModel/precomputed"]
    assert eager.judge.startswith("checkout:")
    for cell_id in ("BertModel::test_aoti_export_static", "BertModel::test_precomputed_inputs_match_eager"):
        run = execute_cell(Cell.parse(cell_id), get_source("zoo"), load_skiplists(empty))
        assert run.status is Status.NOT_BUILDABLE and "only the checkout's own test can judge it" in run.message


def test_run_lists_runs_and_reports_the_tests_it_cannot_place(source, tmp_path):
    """`export-bot run` on the checkout, then `diff`: the cells reach JUnit, the reader and the report."""
    import json
    import subprocess
    import sys

    from click.testing import CliRunner

    from bot.cli import main
    from tests.conftest import SKIPLISTS
    from tests.run.plugin_helpers import read_junit
    from tests.run.test_checkout_judge import ENV

    junit = tmp_path / "out.xml"
    cells = "BertModel::test_precomputed_inputs_match_eager,BertModel::test_aoti_export_static"
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{source.root}", "--cells", cells]
    command += ["--skiplists", str(write_skiplists(tmp_path / "skiplists")), "-n", "0", "--junit", str(junit)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "other " in result.stderr + result.stdout  # the run's own table has an `other` row
    cases = read_junit(junit).cases
    eager, aoti = cases["BertModel::test_precomputed_inputs_match_eager"], cases["BertModel::test_aoti_export_static"]
    assert (eager.outcome, eager.properties["test"], eager.properties["components"]) == (
        "passed",
        "test_precomputed_inputs_match_eager",
        "BertModel/precomputed",
    )
    assert (aoti.outcome, aoti.properties["backend"]) == ("skipped", "aoti")
    out = tmp_path / "report.json"
    args = ["diff", "--skiplists", str(SKIPLISTS), "--head", str(junit), "--json", str(out)]
    assert CliRunner().invoke(main, args).exit_code == 0
    report = json.loads(out.read_text("utf-8"))
    assert report["counts"] == {"other/static": {"skipped": 1}, "other/other": {"passed": 1}}
