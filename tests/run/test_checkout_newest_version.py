"""An export test module in the shape of upstream's newest: its walk inline in `_should_skip`, gates, targets after axes.

tests/fixtures/transformers_checkout_newest behaves as that version does: a gated class passes
without exporting, `runtime=True` scopes gate only the generate drive, and a tolerated ExecuTorch
runtime limit passes without running the program. The runner observes all of it.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from bot.cells import Cell, placed
from bot.models.sources import get_source
from bot.models.sources.transformers_tests import TransformersTestsSource
from bot.outcomes import Status
from bot.run.checkout_tests import execute_by_checkout
from bot.run.junit import run_properties
from bot.run.selection import CellRequest, select_from_source
from bot.skiplist.checkout_walk import read_walk
from tests.run.plugin_helpers import write_skiplists
from tests.run.test_checkout_judge import FIXTURES, export_checkout


def newest_checkout(root: Path) -> Path:
    export_checkout(root)
    shutil.copytree(FIXTURES / "transformers_checkout_newest", root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    return newest_checkout(tmp_path_factory.mktemp("newest") / "c")


@pytest.fixture(scope="module")
def source(checkout):
    return get_source(f"transformers-tests:{checkout}")


def test_every_test_is_a_cell_placed_as_its_expansion_declares(source, caplog):
    with caplog.at_level(logging.WARNING, logger="bot.run.selection"):
        cells = select_from_source(
            CellRequest(models=("LlamaForCausalLM", "BertModel"), targets=("xnnpack", "mlx")), source
        )
    said = [r.getMessage() for r in caplog.records if r.name == "bot.run.selection"]
    assert not said, said
    by_name = {cell.id: cell for cell in cells}
    cell = by_name["LlamaForCausalLM::test_executorch_export_generate_dynamic_multi_token_static_cache_xnnpack"]
    assert (cell.backend, cell.shape, cell.cache, cell.target, cell.axes) == (
        "executorch", "dynamic", "static", "xnnpack", "multi_token"
    )  # fmt: skip
    static = by_name["LlamaForCausalLM::test_torch_export_generate_dynamic_multi_token_static_cache"]
    assert (static.cache, static.axes) == ("static", "multi_token")
    assert "LlamaForCausalLM::test_executorch_export_generate_dynamic_multi_token_mlx" in by_name
    assert all(placed(cell) for cell in cells) and all(Cell.parse(cell.id) == cell for cell in cells)
    # 2 + 2 + 4 forward tests per class; 6 + 6 + 6 + 3 generate tests for the generative one.
    assert len([c for c in cells if c.model_class == "BertModel"]) == 8
    assert len([c for c in cells if c.model_class == "LlamaForCausalLM"]) == 8 + 21


def test_a_gated_class_is_skipped_with_its_scope_and_the_walk_it_took(source, checkout, tmp_path):
    skiplists = write_skiplists(tmp_path / "s", '[all]\nBertModel = "Computes its loss regardless."\n')
    cell = Cell.parse("BertModel::test_executorch_export_static_mlx")
    run = execute_by_checkout(cell, source, skiplists)
    assert (run.status, run.message, run.skip_scope) == (
        Status.SKIPPED, "EXPORT_SKIPS['all']: Computes its loss regardless.", "all"
    )  # fmt: skip
    # `next(...)` stops at the first scope listing the class: the walk observed is what it looked up.
    assert run.walk == ("all",)
    assert any("passes without exporting" in warning for warning in run.warnings)
    narrower = write_skiplists(tmp_path / "n", '["mlx.static"]\nBertModel = "Only MLX."\n')
    run = execute_by_checkout(cell, source, narrower)
    assert (run.status, run.skip_scope) == (Status.SKIPPED, "mlx.static")
    # ExecuTorch walks `executorch`, then its delegate: the same as the module's text reads.
    assert run.walk == tuple(read_walk(checkout).skip(cell)) == (
        "all", "static", "executorch", "executorch.static", "mlx", "mlx.static"
    )  # fmt: skip
    assert dict(run_properties(run))["walk"] == ",".join(run.walk)


@pytest.mark.export
def test_a_tolerated_runtime_limit_is_a_weak_pass(source, tmp_path):
    empty = write_skiplists(tmp_path / "empty")
    run = execute_by_checkout(
        Cell.parse("BertForSequenceClassification::test_executorch_export_static_xnnpack"), source, empty
    )
    assert (run.status, run.compared) == (Status.PASSED, "tolerated"), run.message
    assert dict(run_properties(run))["compared"] == "tolerated"
    ran = execute_by_checkout(Cell.parse("BertModel::test_executorch_export_static_xnnpack"), source, empty)
    assert (ran.status, ran.compared) == (Status.PASSED, None)


@pytest.mark.export
def test_a_gate_scope_gates_only_the_generate_drive(source, checkout, tmp_path):
    scope = "dynamo.generate.runtime.multi_token"
    gated = write_skiplists(tmp_path / "g", f'["{scope}"]\nLlamaForCausalLM = "The merged decode cannot drive."\n')
    cell = Cell.parse("LlamaForCausalLM::test_torch_export_generate_dynamic_multi_token")
    run = execute_by_checkout(cell, source, gated)
    assert run.status is Status.PASSED, run.message
    assert [c.name for c in run.components] == ["LlamaForCausalLM/model"]  # exported and compared, not driven
    assert run.gate_scope == scope and scope in run.gate_walk
    walk = read_walk(checkout)
    assert run.walk == tuple(walk.skip(cell)) and set(run.gate_walk) <= set(walk.gate(cell))
    free = execute_by_checkout(cell, source, write_skiplists(tmp_path / "free"))
    assert [c.name for c in free.components] == ["LlamaForCausalLM/model", "LlamaForCausalLM/generate"]
    assert free.gate_scope is None


def test_the_checkouts_tests_are_listed_as_they_run_with_slow_tests_on(tmp_path, monkeypatch):
    """`@slow` outside an expansion makes a test only when slow tests are off; the source turns them on first."""
    import transformers.testing_utils as testing_utils

    monkeypatch.delenv("RUN_SLOW", raising=False)
    monkeypatch.setattr(testing_utils, "_run_slow_tests", False)
    source = TransformersTestsSource(newest_checkout(tmp_path / "c"))
    names = source.test_methods("BertModel")
    assert "test_onnx_export" not in names and "test_onnx_export_static" in names
    assert testing_utils._run_slow_tests is True
