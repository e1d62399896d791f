"""The hint table (bot/diff/hints.toml): every hint matches a real message of its family, unknown errors get none."""

from __future__ import annotations

import pytest

from bot.diff.groups import signature
from bot.diff.hints import default_hints, hint_for, parse_hints

# A real first line per hint family, as the runner's JUnit carries it, and the stage it fails at.
KNOWN = [
    (
        "export",
        "GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression u0 "
        "(unhinted: u0).  (Size-like symbols: none)",
        "data-dependent-guard",
    ),
    (
        "export",
        "torch._dynamo.exc.UserError: Could not guard on data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1))",
        "data-dependent-guard",
    ),
    (
        "export",
        "torch._dynamo.exc.UserError: Constraints violated (seq_len)! For more information, run with "
        'TORCH_LOGS="+dynamic".',
        "dynamic-dim-specialized",
    ),
    ("export", "TypeError: unhashable type: 'SymInt'", "symint-hashed"),
    (
        "export",
        "torch.onnx._internal.exporter._errors.DispatchError: No ONNX function found for "
        "<OpOverload(op='aten.histc', overload='default')>. Failure message: No decompositions registered",
        "onnx-unsupported-op",
    ),
    (
        "export",
        "onnxscript.ir.ConversionError: Unsupported FX nodes: {'call_function': ['aten._assert_async.msg']}",
        "onnx-unsupported-op",
    ),
    (
        "export",
        "RuntimeError: XNNPACK delegate failed: node aten.native_layer_norm is not supported by the partitioner",
        "xnnpack-partition",
    ),
]
UNKNOWN = [
    ("compare", "AssertionError: Tensor-likes are not close! Mismatched elements: 812 / 4096 (19.8%)"),
    ("run", "RuntimeError: Exception from src/inference/src/cpp/core.cpp:109: Check 'shape' failed"),
    ("crash", "worker 'gw1' crashed while running"),
    ("export", "AttributeError: 'NoneType' object has no attribute 'shape'"),
]


@pytest.mark.parametrize(("stage", "message", "hint"), KNOWN)
def test_a_known_error_gets_its_hint(stage, message, hint):
    found = hint_for(stage, signature(message))
    assert found is not None and found.id == hint
    assert found.text and found.link.startswith("https://")


@pytest.mark.parametrize(("stage", "message"), UNKNOWN)
def test_an_unknown_error_gets_no_hint(stage, message):
    assert hint_for(stage, signature(message)) is None


def test_every_hint_of_the_table_is_tested_and_ids_are_unique():
    ids = [rule.hint.id for rule in default_hints()]
    assert len(ids) == len(set(ids))
    assert set(ids) == {hint for _, _, hint in KNOWN}


def test_the_first_matching_hint_wins():
    rules = parse_hints(
        '[[hint]]\nid = "a"\npatterns = ["boom"]\ntext = "A"\n\n[[hint]]\nid = "b"\npatterns = ["bo"]\ntext = "B"\n'
    )
    assert hint_for("export", "RuntimeError: boom", rules).id == "a"
    assert hint_for("export", "RuntimeError: bob", rules).id == "b"
    assert hint_for("export", "RuntimeError: x", rules) is None
