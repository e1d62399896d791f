"""The `values-1` rules profile: values on every backend and path, greedy token ids on generate, figures recorded.

Under `seed-1` an ONNX or OpenVINO generate export that returns wrong numbers passes (names only),
and so does an ExecuTorch export (output count only). Under `values-1` each fails at `compare`,
and what the comparison measured is recorded beside its tolerance.
"""

from __future__ import annotations

import pytest
import torch

from bot.cells import Cell
from bot.outcomes import Status
from bot.run import backends
from bot.run.execute import execute_cell
from bot.run.judge import Rule, check_token_ids, judge_measured, measure, rule_for
from bot.run.junit import run_properties
from tests.run.test_execute import FakeBackend, TinySource, skiplists

WRONG_NUMBERS = [
    Cell("LlamaForCausalLM", "onnx", "static", "generate", "static"),
    Cell("LlamaForCausalLM", "openvino", "dynamic", "generate", "dynamic"),
    Cell("BertModel", "executorch", "static", target="xnnpack"),
    Cell("LlamaForCausalLM", "executorch", "static", "generate", "static", "xnnpack"),
]


class Perturbed(FakeBackend):
    """Runs the model eagerly and adds `delta` to one output (ExecuTorch's outputs as an unnamed list)."""

    def __init__(self, delta: float, listed: bool):
        super().__init__()
        self.delta, self.listed = delta, listed

    def run(self, program, inputs):
        outputs = super().run(program, inputs)
        name = next(iter(outputs))
        outputs[name] = outputs[name] + self.delta
        return list(outputs.values()) if self.listed else outputs


@pytest.mark.parametrize("cell", WRONG_NUMBERS, ids=str)
def test_wrong_numbers_fail_under_values_and_pass_under_the_seeds_rules(monkeypatch, cell):
    backend = Perturbed(1e-2, listed=cell.backend == "executorch")
    monkeypatch.setattr(backends, "load_backend", lambda name: backend)
    seed = execute_cell(cell, TinySource(), skiplists(), rules="seed-1")
    assert seed.status is Status.PASSED and seed.compared in ("names", "count")
    run = execute_cell(cell, TinySource(), skiplists())
    assert (run.status, run.stage, run.judge) == (Status.FAILED, "compare", "rules:values-1"), run.message
    assert "Mismatched elements" in run.details and "max abs error 0.01" in run.details


@pytest.mark.parametrize("cell", WRONG_NUMBERS, ids=str)
def test_a_pass_says_values_and_records_its_figures(monkeypatch, cell):
    backend = Perturbed(2e-5, listed=cell.backend == "executorch")
    monkeypatch.setattr(backends, "load_backend", lambda name: backend)
    run = execute_cell(cell, TinySource(), skiplists())
    assert (run.status, run.compared) == (Status.PASSED, "values"), run.message
    properties = dict(run_properties(run))
    assert float(properties["figure.max_abs_error"]) == pytest.approx(2e-5, rel=0.05)
    assert float(properties["figure.mismatch_fraction"]) == 0.0
    assert 0 < float(properties["figure.tolerance_ratio"]) < 1
    assert properties["figure.atol"] == "0.001" and properties["figure.worst_output"]


class FlippedToken(FakeBackend):
    """The third position's greedy token becomes another: one logit raised, far too few elements for the 5 % allowance."""

    def run(self, program, inputs):
        outputs = super().run(program, inputs)
        logits = outputs["logits"].clone()
        if logits.shape[1] > 2:
            logits[0, 2, (int(logits[0, 2].argmax()) + 1) % logits.shape[-1]] += 100.0
        outputs["logits"] = logits
        return outputs


def test_a_generate_cell_whose_third_token_differs_fails(monkeypatch):
    monkeypatch.setattr(backends, "load_backend", lambda name: FlippedToken())
    cell = Cell("LlamaForCausalLM", "dynamo", "static", "generate", "static")
    assert execute_cell(cell, TinySource(), skiplists(), rules="seed-1").status is Status.PASSED
    run = execute_cell(cell, TinySource(), skiplists())
    assert (run.status, run.stage) == (Status.FAILED, "compare"), run.message
    assert "greedy token ids differ from eager's at 1 of" in run.message and "first at (0, 2)" in run.message


def test_tolerances_follow_the_backend_and_the_dtype():
    assert rule_for(Cell("M", "dynamo"), "values-1") == Rule("values", atol=1e-4, rtol=1e-4)
    generate = rule_for(Cell("M", "dynamo", "static", "generate", "static"), "values-1")
    assert (generate.atol, generate.rtol, generate.tokens) == (5e-4, 1e-4, True)
    executorch = rule_for(Cell("M", "executorch", target="xnnpack"), "values-1", torch.bfloat16)
    assert (executorch.compare, executorch.positional, executorch.atol, executorch.rtol) == ("values", True, 5e-2, 5e-2)
    assert rule_for(Cell("M", "onnx"), "values-1", torch.float16).atol == 1e-2


def test_measured_figures_name_the_worst_output_against_its_tolerance():
    expected = {"a": torch.zeros(10), "b": torch.ones(10)}
    actual = {"a": torch.zeros(10), "b": torch.ones(10)}
    actual["b"][0] += 3e-3  # 1.5× its tolerance of 1e-3 + 1e-3·1
    figures = measure(actual, expected, atol=1e-3, rtol=1e-3)
    assert (figures.worst, figures.mismatch_fraction) == ("b", 0.1)
    assert figures.tolerance_ratio == pytest.approx(1.5, rel=1e-4) and figures.max_abs_error == pytest.approx(
        3e-3, rel=1e-4
    )


def test_positions_a_mask_hides_never_fail_the_token_check():
    logits = torch.randn(1, 3, 5)
    flipped = logits.clone()
    flipped[0, 2] = -logits[0, 2]
    mask = torch.tensor([[1, 1, 0]])
    check_token_ids({"logits": flipped}, {"logits": logits}, {"attention_mask": mask})
    with pytest.raises(AssertionError, match="greedy token ids differ"):
        check_token_ids({"logits": flipped}, {"logits": logits}, {"attention_mask": torch.ones(1, 3)})


def test_executorch_outputs_are_compared_in_eagers_leaf_order():
    rule = rule_for(Cell("M", "executorch", target="xnnpack"), "values-1")
    expected = {"logits": torch.zeros(2, 3), "hidden": torch.ones(2, 3)}
    assert judge_measured(rule, [torch.zeros(2, 3), torch.ones(2, 3)], expected)[0] == "passed"
    with pytest.raises(AssertionError):
        judge_measured(rule, [torch.ones(2, 3), torch.zeros(2, 3)], expected)
    with pytest.raises(AssertionError, match="output count differs"):
        judge_measured(rule, [torch.zeros(2, 3)], expected)


def test_a_tie_in_eagers_logits_may_go_either_way():
    """A fully masked row's logits are constant: eager's argmax is its first index, the export's any other."""
    logits = torch.randn(1, 3, 5)
    logits[0, 1] = 0.25
    exported = logits.clone()
    exported[0, 1, 3] += 1e-9
    check_token_ids({"logits": exported}, {"logits": logits}, atol=1e-3, rtol=1e-3)
    exported[0, 2] = -logits[0, 2]  # a decisive choice, reversed
    with pytest.raises(AssertionError, match="at 1 of 3 positions; first at \\(0, 2\\)"):
        check_token_ids({"logits": exported}, {"logits": logits}, atol=1e-3, rtol=1e-3)


REAL = [
    Cell("LlamaForCausalLM", "onnx", "static", "generate", "static"),
    Cell("LlamaForCausalLM", "openvino", "static", "generate", "static"),
    Cell("BertModel", "executorch", "static", target="xnnpack"),
]


class _Shifted:
    """The real backend module, with 1e-2 added to the first output its runtime returns."""

    def __init__(self, module):
        self.module = module

    def export(self, *args, **kwargs):
        return self.module.export(*args, **kwargs)

    def run(self, program, inputs):
        outputs = self.module.run(program, inputs)
        if isinstance(outputs, list):
            return [outputs[0] + 1e-2, *outputs[1:]]
        first = next(iter(outputs))
        return {**outputs, first: outputs[first] + 1e-2}


@pytest.mark.export
@pytest.mark.parametrize("cell", REAL, ids=str)
def test_real_runtimes_returning_wrong_numbers_fail_under_values_only(monkeypatch, cell):
    real = backends.load_backend
    monkeypatch.setattr(backends, "load_backend", lambda name: _Shifted(real(name)))
    seed = execute_cell(cell, TinySource(), skiplists(), rules="seed-1")
    assert seed.status is Status.PASSED, seed.message
    run = execute_cell(cell, TinySource(), skiplists())
    assert (run.status, run.stage) == (Status.FAILED, "compare"), run.message
    monkeypatch.setattr(backends, "load_backend", real)
    honest = execute_cell(cell, TinySource(), skiplists())
    assert (honest.status, honest.compared) == (Status.PASSED, "values"), honest.message
    properties = dict(run_properties(honest))
    assert float(properties["figure.tolerance_ratio"]) < 1
    # What the artifact measured: its size, and what each backend counts of it.
    counted = {"onnx": "figure.onnx_nodes", "openvino": "figure.openvino_ops", "executorch": "figure.delegated_nodes"}
    assert float(properties["figure.artifact_bytes"]) > 10_000 and float(properties[counted[cell.backend]]) > 10
    assert float(properties["figure.process_peak_rss_bytes"]) > 50e6 and "time.measure" in properties
