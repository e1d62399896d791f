"""The comparison rules of the bot's profiles (bot/profiles.py): how a backend's outputs are judged against eager.

`seed-1` is the seed's, verbatim; `values-1` compares values everywhere and the greedy token ids
of generate components. Both measure what they compare: each output's largest absolute and
relative error and the fraction of elements beyond its tolerance (docs/rules.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from bot import registry
from bot.cells import Cell

# The seed lets up to 5 % of the elements of the first mismatching output differ.
MISMATCH_ALLOWANCE = 0.05

# values-1's float32 tolerances (atol, rtol) are upstream's newest export tests', declared per
# backend (`Backend.tolerance`, bot/registry.py): 1e-4 where it runs eager's kernels, 1e-3 where
# its runtime runs its own, which is what a backend registered later gets unless it says otherwise.
# Half precision rounds at 2**-11 (float16) and 2**-8 (bfloat16) of each value, once per op: a
# model's outputs carry a few such roundings per layer, so neither can be held to float32's 1e-3.
DTYPE_FLOORS = {torch.float16: 1e-2, torch.bfloat16: 5e-2}


@dataclass(frozen=True)
class Rule:
    """What a profile checks for one cell's components."""

    compare: str  # "values", "names" (output names only) or "count" (number of outputs only)
    names: bool = False  # output names must equal eager's before values are compared
    atol: float = 0.0
    rtol: float = 0.0
    mask: bool = False  # zero positions a 2-D attention mask hides, on both sides
    check_device: bool = True
    positional: bool = False  # unnamed outputs (ExecuTorch): compared with eager's leaves in order
    tokens: bool = False  # the greedy token ids of `logits` must equal eager's, position by position


@dataclass(frozen=True)
class Figures:
    """What a value comparison measured, over a component's outputs (the worst output's, per figure)."""

    max_abs_error: float
    max_rel_error: float  # over the elements whose eager value is above atol
    mismatch_fraction: float  # of the elements, beyond atol + rtol·|eager|
    tolerance_ratio: float  # the largest |exported − eager| / (atol + rtol·|eager|): above 1 is beyond tolerance
    worst: str  # the output of that largest ratio
    atol: float
    rtol: float

    def worse(self, other: Figures | None) -> Figures:
        """The figures of two components, each the larger (a cell's figures over its components)."""
        if other is None:
            return self
        worst = self if self.tolerance_ratio >= other.tolerance_ratio else other
        return Figures(
            max(self.max_abs_error, other.max_abs_error),
            max(self.max_rel_error, other.max_rel_error),
            max(self.mismatch_fraction, other.mismatch_fraction),
            worst.tolerance_ratio,
            worst.worst,
            self.atol,
            self.rtol,
        )

    def describe(self) -> str:
        return (
            f"max abs error {self.max_abs_error:.3g} (atol {self.atol:g}), max rel error {self.max_rel_error:.3g} "
            f"(rtol {self.rtol:g}), {self.mismatch_fraction:.2%} of elements beyond tolerance; worst `{self.worst}`, "
            f"at {self.tolerance_ratio:.3g}× its tolerance"
        )


def rule_for(cell: Cell, profile: str = "seed-1", dtype: torch.dtype = torch.float32) -> Rule:
    """The profile's rule for the cell's test."""
    if profile == "values-1":
        return _values_rule(cell, dtype)
    return _seed_rule(cell)


def _seed_rule(cell: Cell) -> Rule:
    """The seed's per-test rule: dynamo values at 1e-4; ONNX/OpenVINO names then values at 1e-3
    (masked, devices not compared), names only on generate; ExecuTorch output counts.

    The seed's numbers, not the declared tolerances: a backend is placed by what it declares (eager's
    kernels as torch.export, unnamed outputs as ExecuTorch, otherwise as ONNX and OpenVINO)."""
    backend = registry.BY_NAME[cell.backend]
    compares = backend.compares(cell.generate)
    if compares == "count":
        return Rule("count")
    if compares == "names":
        return Rule("names", names=True)
    if backend.eager_kernels:
        return Rule("values", atol=1e-4, rtol=1e-4)
    return Rule("values", names=True, atol=1e-3, rtol=1e-3, mask=True, check_device=False)


def _values_rule(cell: Cell, dtype: torch.dtype) -> Rule:
    """values-1: values on every backend and path, token ids on generate, tolerances per backend and dtype."""
    backend = registry.BY_NAME[cell.backend]
    atol, rtol = (cell.generate and backend.generate_tolerance) or backend.tolerance
    floor = DTYPE_FLOORS.get(dtype, 0.0)
    atol, rtol = max(atol, floor), max(rtol, floor)
    if backend.eager_kernels:
        return Rule("values", atol=atol, rtol=rtol, tokens=cell.generate)
    names = backend.named_outputs
    return Rule(
        "values",
        names=names,
        atol=atol,
        rtol=rtol,
        mask=True,
        check_device=False,
        positional=not names,
        tokens=cell.generate,
    )


def judge(
    rule: Rule,
    actual,
    expected: Mapping[str, torch.Tensor],
    inputs: Mapping | None = None,
    *,
    compare_values: bool = True,
) -> str:
    """Check a component's outputs against eager's leaves; "passed" or "uncompared" (values not compared), else raise."""
    return judge_measured(rule, actual, expected, inputs, compare_values=compare_values)[0]


def judge_measured(
    rule: Rule,
    actual,
    expected: Mapping[str, torch.Tensor],
    inputs: Mapping | None = None,
    *,
    compare_values: bool = True,
) -> tuple[str, Figures | None]:
    """`judge`, with what the value comparison measured (None when values were not compared).

    `actual` is a `{name: tensor}` dict, or a list for ExecuTorch (whose outputs have no names).
    Raises AssertionError with the seed's messages, and the figures of a failed value comparison.
    """
    if rule.compare == "count" or rule.positional:
        if len(actual) != len(expected):
            raise AssertionError(f"{len(actual)} != {len(expected)}: output count differs from eager's")
        if rule.compare == "count":
            return "passed", None
        actual = dict(zip(expected, actual))  # in eager's leaf order: the program's outputs are its flattening
    if not actual:
        raise AssertionError("Exported outputs are empty.")
    if rule.names and set(actual) != set(expected):
        missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
        raise AssertionError(f"output names differ from eager's: missing {missing}, unexpected {extra}")
    if rule.compare == "names":
        return "passed", None
    if not compare_values:
        return "uncompared", None
    masked = inputs if rule.mask else None
    figures = check_outputs_close(
        actual, expected, atol=rule.atol, rtol=rule.rtol, check_device=rule.check_device, inputs=masked
    )
    if rule.tokens:
        check_token_ids(actual, expected, masked, atol=rule.atol, rtol=rule.rtol)
    return "passed", figures


def check_token_ids(
    actual: Mapping, expected: Mapping, inputs: Mapping | None = None, *, atol: float = 0.0, rtol: float = 0.0
) -> None:
    """The greedy next token of `logits` at every position is one eager would pick too (a mask hides positions).

    Values within tolerance can still choose another token where two logits are nearly tied, and
    a generate() driven by the export would diverge from eager's from there. A token counts as
    eager's choice when eager's own logit for it is within the tolerance of eager's best: a tie
    (a fully masked row's constant logits) may go either way, a decisive choice may not.
    """
    if "logits" not in actual or "logits" not in expected:
        return
    got, want = actual["logits"].detach().double().cpu(), expected["logits"].detach().double().cpu()
    if got.shape != want.shape:
        raise AssertionError(f"logits have shape {tuple(got.shape)}, eager's {tuple(want.shape)}")
    chosen = got.argmax(-1, keepdim=True)
    best = want.max(-1, keepdim=True).values
    differ = (want.gather(-1, chosen) < best - (atol + rtol * best.abs())).squeeze(-1)
    mask = masking_tensor(inputs or {})
    if mask is not None and tuple(mask.shape) == tuple(differ.shape):
        differ &= mask.bool().cpu()
    if differ.any():
        first = tuple(int(i) for i in differ.nonzero()[0])
        raise AssertionError(
            f"greedy token ids differ from eager's at {int(differ.sum())} of {differ.numel()} positions; "
            f"first at {first}: {int(chosen[first])} vs eager's {int(want[first].argmax())}"
        )


def check_outputs_close(
    actual, expected, *, atol: float, rtol: float, check_device: bool = True, inputs: Mapping | None = None
) -> Figures | None:
    """The seed's `_check_outputs_close`: assert_close, forgiving up to 5 % mismatched elements; returns the figures.

    With `inputs` carrying a plain 2-D `attention_mask` (or NaViT's `pixel_attention_mask`), the
    positions it masks are zeroed on both sides first: a fully masked row is a softmax over
    nothing, which each runtime fills differently and no caller reads.
    """
    mask = masking_tensor(inputs or {})
    if mask is not None:
        actual, expected = zero_masked_positions(actual, mask), zero_masked_positions(expected, mask)
    figures = measure(actual, expected, atol=atol, rtol=rtol)
    try:
        torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, check_device=check_device)
    except AssertionError as exc:
        found = re.findall(r"Mismatched elements: (\d+) / (\d+)", str(exc))
        if found:
            mismatched, total = map(int, found[0])
            if mismatched / total < MISMATCH_ALLOWANCE:
                return figures
        raise AssertionError(f"{exc}\n{figures.describe()}" if figures else str(exc)) from None
    return figures


def measure(actual: Mapping, expected: Mapping, *, atol: float, rtol: float) -> Figures | None:
    """Per output of the same shape, |exported − eager|: the largest, relative to |eager|, and the share beyond tolerance."""
    worst: Figures | None = None
    for name, want in expected.items():
        got = actual.get(name) if isinstance(actual, Mapping) else None
        if not (torch.is_tensor(got) and torch.is_tensor(want)) or got.shape != want.shape or not want.numel():
            continue
        got, want = got.detach().double().cpu(), want.detach().double().cpu()
        error = (got - want).abs().nan_to_num(nan=float("inf"))
        # Relative error only where eager's value is above atol: near zero it is noise over nothing.
        meaningful = want.abs() > atol
        relative = error[meaningful] / want.abs()[meaningful] if meaningful.any() else torch.zeros(1)
        allowed = atol + rtol * want.abs()
        beyond = float((error > allowed).double().mean())
        ratio = float((error / allowed.clamp_min(torch.finfo(torch.float32).tiny)).max())
        found = Figures(float(error.max()), float(relative.max()), beyond, ratio, str(name), atol, rtol)
        worst = found.worse(worst) if worst is not None else found
    return worst


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
