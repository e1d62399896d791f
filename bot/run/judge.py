"""The seed's comparison rules: how a backend's outputs are judged against eager, per backend and path."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from bot.cells import Cell

# The seed lets up to 5 % of the elements of the first mismatching output differ.
MISMATCH_ALLOWANCE = 0.05


@dataclass(frozen=True)
class Rule:
    """What the seed checks for one cell's components."""

    compare: str  # "values", "names" (output names only) or "count" (number of outputs only)
    names: bool = False  # output names must equal eager's before values are compared
    atol: float = 0.0
    rtol: float = 0.0
    mask: bool = False  # zero positions a 2-D attention mask hides, on both sides
    check_device: bool = True


def rule_for(cell: Cell) -> Rule:
    """The seed's per-test rule: dynamo values at 1e-4; ONNX/OpenVINO names then values at 1e-3
    (masked, devices not compared), names only on generate; ExecuTorch output counts."""
    if cell.backend == "executorch":
        return Rule("count")
    if cell.backend == "dynamo":
        return Rule("values", atol=1e-4, rtol=1e-4)
    if cell.generate:
        return Rule("names", names=True)
    return Rule("values", names=True, atol=1e-3, rtol=1e-3, mask=True, check_device=False)


def judge(
    rule: Rule,
    actual,
    expected: Mapping[str, torch.Tensor],
    inputs: Mapping | None = None,
    *,
    compare_values: bool = True,
) -> str:
    """Check a component's outputs against eager's leaves; "passed" or "uncompared" (values not compared), else raise.

    `actual` is a `{name: tensor}` dict, or a list for ExecuTorch (whose outputs have no names).
    Raises AssertionError with the seed's messages.
    """
    if rule.compare == "count":
        if len(actual) != len(expected):
            raise AssertionError(f"{len(actual)} != {len(expected)}: output count differs from eager's")
        return "passed"
    if not actual:
        raise AssertionError("Exported outputs are empty.")
    if rule.names and set(actual) != set(expected):
        missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
        raise AssertionError(f"output names differ from eager's: missing {missing}, unexpected {extra}")
    if rule.compare == "names":
        return "passed"
    if not compare_values:
        return "uncompared"
    check_outputs_close(
        actual,
        expected,
        atol=rule.atol,
        rtol=rule.rtol,
        check_device=rule.check_device,
        inputs=inputs if rule.mask else None,
    )
    return "passed"


def check_outputs_close(
    actual, expected, *, atol: float, rtol: float, check_device: bool = True, inputs: Mapping | None = None
) -> None:
    """The seed's `_check_outputs_close`: assert_close, forgiving up to 5 % mismatched elements.

    With `inputs` carrying a plain 2-D `attention_mask` (or NaViT's `pixel_attention_mask`), the
    positions it masks are zeroed on both sides first: a fully masked row is a softmax over
    nothing, which each runtime fills differently and no caller reads.
    """
    mask = masking_tensor(inputs or {})
    if mask is not None:
        actual, expected = zero_masked_positions(actual, mask), zero_masked_positions(expected, mask)
    try:
        torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, check_device=check_device)
    except AssertionError as exc:
        found = re.findall(r"Mismatched elements: (\d+) / (\d+)", str(exc))
        if found:
            mismatched, total = map(int, found[0])
            if mismatched / total < MISMATCH_ALLOWANCE:
                return
        raise


def masking_tensor(inputs: Mapping) -> torch.Tensor | None:
    """The 2-D mask whose positions map onto outputs; a per-layer dict or a BlockMask does not."""
    mask = inputs.get("attention_mask")
    if not torch.is_tensor(mask):
        mask = inputs.get("pixel_attention_mask")
    return mask if torch.is_tensor(mask) and mask.dim() == 2 else None


def zero_masked_positions(outputs: Mapping[str, torch.Tensor], mask: torch.Tensor) -> dict:
    """Zero every output position `mask` hides, for outputs whose leading axes are the mask's shape."""
    keep = mask.bool()
    zeroed = {}
    for key, value in outputs.items():
        if torch.is_tensor(value) and value.dim() >= 2 and tuple(value.shape[:2]) == tuple(keep.shape):
            shaped = keep.reshape(keep.shape + (1,) * (value.dim() - 2)).to(value.device)
            value = value * shaped.to(value.dtype)
        zeroed[key] = value
    return zeroed


# The seed's ExecuTorch runtime codes that mean "the export is valid but ExecuTorch's own runtime
# can't service it": skipped, not failed. Load: 0x14 missing portable kernel, 0x21 arena can't be
# allocated, 0x1 XNNPACK partition won't compile. Execute: 0x12 portable-kernel InvalidArgument,
# 0x1 XNNPACK delegate failure, 0x10 XNNPACK can't resize a static tensor (from `execute()` or
# `set_inputs()`).
EXECUTORCH_LOAD_LIMIT_CODES = frozenset({"0x1", "0x14", "0x21"})
EXECUTORCH_EXECUTE_LIMIT_CODES = frozenset({"0x1", "0x10", "0x12"})


def is_executorch_runtime_limit(exc: BaseException) -> bool:
    """The seed's `_is_executorch_runtime_limit`: a known ExecuTorch runtime limitation (kernel, arena, delegate)."""
    msg = str(exc)
    if isinstance(exc, MemoryError) or "bad_alloc" in msg:
        return True
    load = re.search(r"Failed to load method forward, error: 0x:?([0-9a-fA-F]+)", msg)
    if load and f"0x{load.group(1)}" in EXECUTORCH_LOAD_LIMIT_CODES:
        return True
    execute = re.search(r"(?:execute\(\)|set_inputs\(\) for method '\w+') failed with error 0x([0-9a-fA-F]+)", msg)
    return bool(execute and f"0x{execute.group(1)}" in EXECUTORCH_EXECUTE_LIMIT_CODES)
