"""Reason drafts: exporter, stage, a cleaned `ExceptionType: message`, and the TODO."""

from __future__ import annotations

from bot.cells import Cell
from bot.outcomes import Status
from bot.propose.reasons import clean_message, draft_reason, representative, same_as_reason, signature
from tests.propose.helpers import result

ONNX_DYN = Cell("FooModel", "onnx", "dynamic")
ONNX_STATIC = Cell("FooModel", "onnx", "static")


def test_clean_message_strips_machine_specific_parts():
    raw = (
        "RuntimeError: failed in /home/ci/.venv/lib/python3.11/site-packages/torch/_export/x.py "
        "at <object at 0x7f3a2b1c9d40> from /tmp/pytest-of-ci/pytest-3/test_a0/model.py\nsecond line"
    )
    cleaned = clean_message(raw)
    assert cleaned == "RuntimeError: failed in torch/_export/x.py at <object at 0x…> from …/model.py"


def test_clean_message_names_exceptions_bare():
    assert clean_message("torch._dynamo.exc.UserError: guard u0") == "UserError: guard u0"
    assert clean_message("see torch.export.Foo: x") == "see torch.export.Foo: x"


def test_clean_message_trims_and_keeps_toml_safe_quotes():
    cleaned = clean_message("ValueError: `x` " + "y" * 400)
    assert len(cleaned) == 160 and cleaned.endswith("…")
    assert "`" not in cleaned


def test_draft_reads_like_the_seed():
    failures = [result(c, Status.FAILED, message="TorchExportError: guard on u0 > 1") for c in (ONNX_DYN,)]
    assert draft_reason("onnx.dynamic", failures) == (
        "ONNX export (dynamic shapes) fails at stage `export`: `TorchExportError: guard on u0 > 1`. "
        "TODO: find the root cause."
    )


def test_draft_names_every_backend_and_the_target():
    cells = [Cell("FooModel", "dynamo", "dynamic"), Cell("FooModel", "executorch", "dynamic", target="xnnpack")]
    failures = [result(c, Status.FAILED, stage="run", message="IndexError: out of range") for c in cells]
    assert draft_reason("dynamic", failures).startswith(
        "Torch and ExecuTorch (xnnpack) exports (dynamic shapes) fail at stage `run`: `IndexError"
    )


def test_draft_for_crashes_and_timeouts():
    crash = result(ONNX_DYN, Status.ERROR, kind="crash", message="worker crashed")
    assert draft_reason("onnx", [crash]) == "ONNX export crashes: `worker crashed`. TODO: find the root cause."
    hang = result(ONNX_DYN, Status.ERROR, kind="timeout", stage="export", message="")
    assert draft_reason("onnx", [hang]) == "ONNX export times out at stage `export`. TODO: find the root cause."


def test_representative_is_the_most_common_failure():
    a = result(ONNX_DYN, Status.FAILED, message="KeyError: a")
    b = result(ONNX_STATIC, Status.FAILED, message="ValueError: b")
    c = result(Cell("FooModel", "dynamo", "static"), Status.FAILED, message="ValueError: b")
    assert representative([a, b, c]).message == "ValueError: b"


def test_signature_ignores_the_class_name_and_paths():
    a = result(
        Cell("FooModel", "onnx", "static"),
        Status.FAILED,
        message="AttributeError: FooModel has no x in /home/a/site-packages/m.py",
    )
    b = result(
        Cell("BarModel", "onnx", "static"),
        Status.FAILED,
        message="AttributeError: BarModel has no x in /home/b/site-packages/m.py",
    )
    assert signature(a) == signature(b)
    c = result(Cell("BarModel", "onnx", "static"), Status.FAILED, stage="run", message=b.message)
    assert signature(a) != signature(c)


def test_same_as_reason_references_the_first_class():
    r = result(ONNX_DYN, Status.FAILED, message="TorchExportError: guard")
    assert same_as_reason("BarModel", r) == "Same `TorchExportError` at stage `export` as `BarModel`."


def test_draft_from_a_group_names_the_signature_and_the_culprit_line():
    from bot.diff.groups import Culprit, Group

    group = Group(
        "export",
        "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u…, #)",
        (ONNX_DYN.id,),
        culprit=Culprit("src/transformers/models/foo/modeling_foo.py", 639, "if x.max() < 0:", changed=True),
    )
    failures = [result(ONNX_DYN, Status.FAILED, message="GuardOnDataDependentSymNode: … Eq(u3, 1)")]
    assert draft_reason("onnx.dynamic", failures, group) == (
        "ONNX export (dynamic shapes) fails at stage `export` in `src/transformers/models/foo/modeling_foo.py:639`: "
        "`GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u…, #)`. "
        "TODO: find the root cause."
    )
    # No repository frame: the signature alone, no guessed line.
    bare = Group("export", "RuntimeError: x", (ONNX_DYN.id,))
    assert draft_reason("onnx.dynamic", failures, bare).endswith(": `RuntimeError: x`. TODO: find the root cause.")
