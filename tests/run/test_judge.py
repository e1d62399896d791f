"""The seed's comparison rules on plain tensors: tolerances, the 5 % allowance, masking, names, counts, runtime limits."""

from __future__ import annotations

import pytest
import torch

from bot.cells import Cell
from bot.run.judge import Rule, check_outputs_close, is_executorch_runtime_limit, judge, rule_for, zero_masked_positions

DYNAMO = rule_for(Cell("M", "dynamo"))
ONNX = rule_for(Cell("M", "onnx", "dynamic"))
ONNX_GENERATE = rule_for(Cell("M", "onnx", "static", "generate", "dynamic"))
EXECUTORCH = rule_for(Cell("M", "executorch", target="xnnpack"))


def hidden(seed: int = 0) -> torch.Tensor:
    return torch.randn(2, 5, 10, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    ("cell", "rule"),
    [
        (Cell("M", "dynamo", "dynamic"), Rule("values", atol=1e-4, rtol=1e-4)),
        (Cell("M", "dynamo", "static", "generate", "static"), Rule("values", atol=1e-4, rtol=1e-4)),
        (Cell("M", "onnx"), Rule("values", names=True, atol=1e-3, rtol=1e-3, mask=True, check_device=False)),
        (
            Cell("M", "openvino", "dynamic"),
            Rule("values", names=True, atol=1e-3, rtol=1e-3, mask=True, check_device=False),
        ),
        (Cell("M", "openvino", "dynamic", "generate", "dynamic"), Rule("names", names=True)),
        (Cell("M", "onnx", "static", "generate", "static"), Rule("names", names=True)),
        (Cell("M", "executorch", "dynamic", "generate", "dynamic", "xnnpack"), Rule("count")),
    ],
    ids=str,
)
def test_rule_per_backend_and_path(cell, rule):
    assert rule_for(cell) == rule


def test_values_within_tolerance_pass_and_beyond_fail():
    expected = {"last_hidden_state": hidden()}
    assert judge(DYNAMO, {"last_hidden_state": expected["last_hidden_state"] + 5e-5}, expected) == "passed"
    with pytest.raises(AssertionError, match="Mismatched elements: 100 / 100"):
        judge(DYNAMO, {"last_hidden_state": expected["last_hidden_state"] + 5e-4}, expected)
    # The same gap is inside ONNX's 1e-3.
    assert judge(ONNX, {"last_hidden_state": expected["last_hidden_state"] + 5e-4}, expected) == "passed"


@pytest.mark.parametrize(("wrong", "passes"), [(4, True), (5, False)])
def test_up_to_five_percent_of_elements_may_mismatch(wrong, passes):
    expected = torch.zeros(100)
    actual = expected.clone()
    actual[:wrong] = 1.0
    if passes:
        check_outputs_close({"x": actual}, {"x": expected}, atol=1e-4, rtol=1e-4)
    else:
        with pytest.raises(AssertionError):
            check_outputs_close({"x": actual}, {"x": expected}, atol=1e-4, rtol=1e-4)


def test_masked_positions_are_zeroed_for_onnx_not_for_dynamo():
    mask = torch.ones(2, 5, dtype=torch.long)
    mask[1, 3:] = 0
    expected = {"last_hidden_state": hidden(), "pooler_output": torch.ones(2, 10)}
    actual = {key: value.clone() for key, value in expected.items()}
    actual["last_hidden_state"][1, 3:] += 7.0  # 20 of 100 elements, all under the mask
    inputs = {"attention_mask": mask}
    assert judge(ONNX, actual, expected, inputs) == "passed"
    with pytest.raises(AssertionError):
        judge(DYNAMO, actual, expected, inputs)


def test_pixel_attention_mask_masks_when_attention_mask_is_not_a_tensor():
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    expected = {"x": hidden()}
    actual = {"x": expected["x"].clone()}
    actual["x"][1, 2:] = 0.5
    assert judge(ONNX, actual, expected, {"attention_mask": {"full": mask}, "pixel_attention_mask": mask}) == "passed"


def test_only_a_plain_2d_mask_maps_onto_outputs():
    expected = {"x": hidden()}
    actual = {"x": expected["x"].clone()}
    actual["x"][1, 2:] = 0.5
    with pytest.raises(AssertionError):
        judge(ONNX, actual, expected, {"attention_mask": torch.ones(2, 1, 5, 5)})


def test_zero_masked_positions_leaves_outputs_of_other_shapes():
    mask = torch.tensor([[1, 0]])
    out = zero_masked_positions({"seq": torch.ones(1, 2, 3), "pooled": torch.ones(1, 3)}, mask)
    assert out["seq"][0, 1].abs().sum() == 0 and out["seq"][0, 0].sum() == 3
    assert torch.equal(out["pooled"], torch.ones(1, 3))


def test_output_names_must_equal_eager_even_when_uncompared():
    expected = {"logits": hidden(), "past_key_values.layers.0.keys": hidden(1)}
    with pytest.raises(AssertionError, match=r"missing \['past_key_values.layers.0.keys'\], unexpected \['present'\]"):
        judge(ONNX, {"logits": hidden(), "present": hidden(1)}, expected, compare_values=False)
    assert (
        judge(ONNX, {key: value + 1 for key, value in expected.items()}, expected, compare_values=False) == "uncompared"
    )


def test_generate_on_onnx_compares_names_only():
    expected = {"logits": hidden()}
    assert judge(ONNX_GENERATE, {"logits": hidden(9)}, expected) == "passed"
    with pytest.raises(AssertionError, match="output names differ"):
        judge(ONNX_GENERATE, {"scores": hidden()}, expected)


def test_dynamo_compares_values_unless_uncompared():
    expected = {"logits": hidden()}
    with pytest.raises(AssertionError):
        judge(DYNAMO, {"logits": hidden(9)}, expected)
    assert judge(DYNAMO, {"logits": hidden(9)}, expected, compare_values=False) == "uncompared"


def test_empty_outputs_fail():
    with pytest.raises(AssertionError, match="outputs are empty"):
        judge(DYNAMO, {}, {"logits": hidden()})


def test_executorch_compares_counts_only():
    expected = {"logits": hidden(), "hidden": hidden(1)}
    assert judge(EXECUTORCH, [hidden(5), hidden(6)], expected) == "passed"
    with pytest.raises(AssertionError, match="1 != 2"):
        judge(EXECUTORCH, [hidden(5)], expected)


@pytest.mark.parametrize(
    ("error", "limit"),
    [
        (RuntimeError("Failed to load method forward, error: 0x14"), True),
        (RuntimeError("Failed to load method forward, error: 0x:21"), True),
        (RuntimeError("Failed to load method forward, error: 0x1"), True),  # XNNPACK partition won't compile
        (RuntimeError("Failed to load method forward, error: 0x2"), False),
        (RuntimeError("method->execute() failed with error 0x1"), True),  # XNNPACK delegate failure
        (RuntimeError("method->execute() failed with error 0x12"), True),
        (RuntimeError("set_inputs() for method 'forward' failed with error 0x10"), True),
        (RuntimeError("method->execute() failed with error 0x14"), False),
        (RuntimeError("std::bad_alloc"), True),
        (MemoryError(), True),
        (RuntimeError("shape mismatch"), False),
    ],
)
def test_executorch_runtime_limit_codes(error, limit):
    assert is_executorch_runtime_limit(error) is limit
