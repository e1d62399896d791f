"""The stage of a failure of the checkout's own test, read from where its traceback left the test module."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

from bot.cells import Cell
from bot.outcomes import CellResult, Status
from bot.propose.reasons import draft_reason, same_as_reason
from bot.run.checkout_tests import narrowed, node_id, run_method


class _Model:
    """Stands in for a model class: the tests below only read its name."""


class _Exporter:
    def export_program(self, model, inputs):
        raise RuntimeError("Could not guard on data-dependent expression")


class _Staged(unittest.TestCase):
    """Test methods in the shape of upstream's export module, each failing in one stage, no export at all."""

    __test__ = False  # run by the judge under test, not collected by this pytest
    all_model_classes = (_Model,)

    def _prepare_export_model_and_inputs(self, model_class):
        raise ValueError("the tester cannot build this config")

    def _prepare_export_generate_model_and_inputs(self, model_class):
        raise IndexError("generate() produced no decode call")

    def _collect_eager_outputs(self, components):
        assert components, "Eager outputs are empty for model."

    def _run_onnx_program(self, program, inputs):
        raise RuntimeError("[ONNXRuntimeError] : 1 : FAIL")

    def _check_outputs_close(self, actual, expected):
        raise AssertionError("Tensor-likes are not close!")

    def _each(self, body):
        for model_class in self.all_model_classes:
            with self.subTest(f"{model_class.__name__}/model"):
                body()

    def test_torch_export_static(self):
        self._prepare_export_model_and_inputs(_Model)

    def test_torch_export_generate_static(self):
        self._prepare_export_generate_model_and_inputs(_Model)

    def test_torch_export_dynamic(self):
        self._collect_eager_outputs({})

    def test_onnx_export_static(self):
        self._each(lambda: _Exporter().export_program(_Model(), {}))

    def test_onnx_export_dynamic(self):
        self._each(lambda: self._run_onnx_program(None, {}))

    def test_openvino_export_static(self):
        self._each(lambda: self._check_outputs_close(1, 2))

    def test_openvino_export_dynamic(self):
        for model_class in self.all_model_classes:
            with self.subTest(f"{model_class.__name__}/model"):
                self.assertEqual({"logits"}, {"logits", "past"})  # the output names differ

    def test_executorch_export_static_xnnpack(self):
        self._each(lambda: 1 / 0)  # a line no rule reads: the stage is not known


@pytest.mark.parametrize(
    ("method", "stage"),
    [
        ("test_torch_export_static", "build"),
        ("test_torch_export_generate_static", "capture"),
        ("test_torch_export_dynamic", "eager"),
        ("test_onnx_export_static", "export"),
        ("test_onnx_export_dynamic", "run"),
        ("test_openvino_export_static", "compare"),
        ("test_openvino_export_dynamic", "compare"),
        ("test_executorch_export_static_xnnpack", None),
    ],
)
def test_the_stage_is_where_the_test_was_when_it_raised(method, stage):
    verdict = run_method(narrowed(_Staged, _Model, generate="generate" in method), method)
    assert verdict.status is Status.FAILED and verdict.stage == stage, (verdict.message, verdict.details[-800:])


def test_an_unknown_stage_never_reaches_a_skiplist_reason_as_a_placeholder():
    verdict = run_method(narrowed(_Staged, _Model, generate=False), "test_executorch_export_static_xnnpack")
    cells = [Cell.parse(f"{name}::test_executorch_export_static_xnnpack") for name in ("AModel", "BModel")]
    results = [CellResult(cell, Status.FAILED, stage=verdict.stage, message=verdict.message) for cell in cells]
    reason = draft_reason("executorch", results)
    assert (
        reason == "ExecuTorch (xnnpack) export fails: `ZeroDivisionError: division by zero`. TODO: find the root cause."
    )
    assert same_as_reason("AModel", results[1]) == "Same `ZeroDivisionError` as `AModel`."
    known = CellResult(cells[1], Status.FAILED, stage="export", message=verdict.message)
    assert same_as_reason("AModel", known) == "Same `ZeroDivisionError` at stage `export` as `AModel`."


def test_the_test_that_judged_is_named_as_pytest_names_it_from_the_checkouts_root(tmp_path):
    root = Path(__file__).resolve().parents[2]
    assert node_id(_Staged, "test_torch_export_static", root) == (
        "tests/run/test_checkout_stage.py::_Staged::test_torch_export_static"
    )
    assert node_id(_Staged, "test_torch_export_static", tmp_path) is None  # not a file of that checkout
