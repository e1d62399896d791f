"""Failure groups: signature normalization, the culprit frame, the repro line, and groups through the diff."""

from __future__ import annotations

import shlex

import pytest

from bot.cells import Cell
from bot.diff import diff
from bot.diff.groups import culprit, group_failures, repro_command, signature
from bot.outcomes import CellResult, Status
from bot.results import ResultSet, SuiteInfo
from bot.skiplist.model import load_skiplists
from tests.conftest import SKIPLISTS

MODELING = "src/transformers/models/bert/modeling_bert.py"
GUARD = "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u{n}, 1) (unhinted: Eq(u{n}, 1)).  (Size-like symbols: none)"  # noqa: E501
# The tail of a real torch.export traceback (the runner's JUnit `<failure>` text), paths as CI has them.
TRACEBACK = """Traceback (most recent call last):
  File "/home/runner/work/transformers/transformers/src/transformers/models/bert/modeling_bert.py", line 1012, in forward
    encoder_outputs = self.encoder(
                      ^^^^^^^^^^^^^
  File "/home/runner/work/transformers/transformers/src/transformers/models/bert/modeling_bert.py", line 639, in forward
    if input_ids is not None and int(input_ids.max()) < 0:
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/runner/work/transformers/transformers/src/transformers/utils/generic.py", line 88, in wrapper
    return fn(*args)
  File "/opt/conda/lib/python3.11/site-packages/torch/fx/experimental/symbolic_shapes.py", line 8459, in _evaluate_expr
    raise self._make_data_dependent_error(
{error}

For more information, run with TORCH_LOGS="dynamic"

The following call raised this error:
  File "/home/runner/work/transformers/transformers/src/transformers/models/bert/modeling_bert.py", line 639, in forward
    if input_ids is not None and int(input_ids.max()) < 0:


The error above occurred when calling torch.export.export.
"""


@pytest.mark.parametrize(
    ("message", "model_class", "expected"),
    [
        (GUARD.format(n=0), None, "GuardOnDataDependentSymNode: Could not guard on data-dependent expression "
         "Eq(u…, #) (unhinted: Eq(u…, #)). (Size-like symbols: none)"),
        ("RuntimeError: shape [2, 7, 8] at 0x7f3a2b1c9d40 in /tmp/pytest-3/x/model.py", None,
         "RuntimeError: shape [#, #, #] at 0x… in <path>"),
        ("AssertionError: Tensor-likes are not close! Mismatched elements: 812 / 4096 (19.8%)", None,
         "AssertionError: Tensor-likes are not close! Mismatched elements: # / # (#%)"),
        ("TypeError: BertModel.forward() got an unexpected keyword argument 'x'", "BertModel",
         "TypeError: <class>.forward() got an unexpected keyword argument 'x'"),
        ("ValueError: s12 + s3 must be float16 for conv2d\nsecond line", None, "ValueError: s… + s… must be float16 for conv2d"),
        ("worker 'gw3' crashed while running", None, "worker 'gw…' crashed while running"),
        ("", None, ""),
    ],
)  # fmt: skip
def test_signature_masks_what_differs_between_occurrences(message, model_class, expected):
    assert signature(message, model_class) == expected


def failed(cell_id: str, message: str, *, stage="export", details="") -> CellResult:
    return CellResult(Cell.parse(cell_id), Status.FAILED, stage=stage, message=message, details=details)


@pytest.mark.parametrize(
    ("results", "groups"),
    [
        # One cause from two classes and two backends, symbols and paths differing: one group.
        (
            [
                failed("BertModel::test_torch_export_static", GUARD.format(n=0)),
                failed("BertModel::test_onnx_export_dynamic", GUARD.format(n=3)),
                failed("RobertaModel::test_torch_export_dynamic", GUARD.format(n=12)),
                failed("RobertaModel::test_onnx_export_static", GUARD.format(n=1)),
            ],
            1,
        ),
        # The class's own name in the message is masked.
        (
            [
                failed("BertModel::test_onnx_export_static", "AttributeError: 'BertModel' has no attribute 'x'"),
                failed("ViTModel::test_onnx_export_static", "AttributeError: 'ViTModel' has no attribute 'x'"),
            ],
            1,
        ),
        # Two causes: two groups.
        (
            [
                failed("BertModel::test_torch_export_static", GUARD.format(n=0)),
                failed("RobertaModel::test_torch_export_static", GUARD.format(n=0)),
                failed("BertModel::test_onnx_export_static", "DispatchError: No ONNX function found for aten.foo"),
            ],
            2,
        ),
        # One message at two stages: two causes.
        (
            [
                failed("BertModel::test_onnx_export_static", "RuntimeError: boom", stage="export"),
                failed("ViTModel::test_onnx_export_static", "RuntimeError: boom", stage="run"),
            ],
            2,
        ),
    ],
)
def test_cells_group_by_stage_and_signature(results, groups):
    found = group_failures(results)
    assert len(found) == groups
    assert sorted(cell for group in found for cell in group.cells) == sorted(r.cell.id for r in results)


def test_groups_come_largest_first_with_the_representative_first():
    results = [
        failed("ViTModel::test_onnx_export_static", "RuntimeError: once"),
        failed("RobertaModel::test_torch_export_static", GUARD.format(n=0)),
        failed("BertModel::test_torch_export_static", GUARD.format(n=1)),
    ]
    first, second = group_failures(results)
    assert first.cells == ("BertModel::test_torch_export_static", "RobertaModel::test_torch_export_static")
    assert first.excerpt == GUARD.format(n=1)  # the representative's own words
    assert first.hint is not None and first.hint.id == "data-dependent-guard"
    assert second.cells == ("ViTModel::test_onnx_export_static",) and second.hint is None


def test_culprit_prefers_the_frame_torch_export_names():
    details = TRACEBACK.format(error=GUARD.format(n=0))
    found = culprit(details)
    assert (found.path, found.line) == (MODELING, 639)
    assert found.source == "if input_ids is not None and int(input_ids.max()) < 0:"
    assert not found.changed


def test_culprit_falls_back_to_the_deepest_repository_frame():
    details = TRACEBACK.format(error="RuntimeError: x").split("The following call")[0]
    found = culprit(details)
    assert (found.path, found.line, found.source) == ("src/transformers/utils/generic.py", 88, "return fn(*args)")


def test_installed_copies_and_framework_frames_are_no_culprit():
    details = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/transformers/models/bert/modeling_bert.py", line 5, in forward
    x = 1
  File "/opt/venv/lib/python3.11/site-packages/src/transformers/models/bert/modeling_bert.py", line 5, in forward
    x = 1
  File "/opt/conda/lib/python3.11/site-packages/torch/export/_trace.py", line 9, in export
    raise RuntimeError
RuntimeError: x
"""
    assert culprit(details) is None
    assert culprit("") is None


def test_culprit_is_changed_when_the_pr_hunks_hold_its_line():
    details = TRACEBACK.format(error=GUARD.format(n=0))
    assert culprit(details, {MODELING: [(630, 638), (639, 640)]}).changed
    assert not culprit(details, {MODELING: [(600, 638)], "src/transformers/other.py": [(639, 639)]}).changed


def test_group_culprit_prefers_a_changed_line_and_links_it_at_the_head():
    unchanged = TRACEBACK.format(error=GUARD.format(n=0)).replace("modeling_bert.py", "modeling_aaa.py")
    changed = TRACEBACK.format(error=GUARD.format(n=0))
    results = [
        failed("AlbertModel::test_torch_export_static", GUARD.format(n=0), details=unchanged),
        failed("BertModel::test_torch_export_static", GUARD.format(n=0), details=changed),
    ]
    [group] = group_failures(
        results,
        changed_lines={MODELING: [(639, 639)]},
        repository_url="https://github.com/huggingface/transformers",
        head_sha="abc123",
    )
    assert group.representative == "BertModel::test_torch_export_static"
    assert group.culprit.changed and group.culprit.where == f"{MODELING}:639"
    assert group.culprit.url == f"https://github.com/huggingface/transformers/blob/abc123/{MODELING}#L639"
    assert group.repro == "export-bot run --cells BertModel::test_torch_export_static"


def test_no_repository_frame_means_no_culprit_not_a_guess():
    [group] = group_failures([failed("BertModel::test_onnx_export_static", "RuntimeError: x", details="RuntimeError")])
    assert group.culprit is None


@pytest.mark.parametrize(
    ("cell_id", "source", "probe", "expected"),
    [
        (  # forward
            "BertModel::test_torch_export_dynamic",
            "transformers-tests:/home/runner/work/transformers/transformers",
            False,
            "export-bot run --cells BertModel::test_torch_export_dynamic --source transformers-tests:.",
        ),
        (  # generate, dynamic cache
            "LlamaForCausalLM::test_openvino_export_generate_dynamic",
            "zoo",
            False,
            "export-bot run --cells LlamaForCausalLM::test_openvino_export_generate_dynamic --source zoo",
        ),
        (  # generate, static cache
            "LlamaForCausalLM::test_onnx_export_generate_static_static_cache",
            "zoo",
            False,
            "export-bot run --cells LlamaForCausalLM::test_onnx_export_generate_static_static_cache --source zoo",
        ),
        (  # ExecuTorch forward, its target
            "ViTModel::test_executorch_export_dynamic_xnnpack",
            "zoo",
            False,
            "export-bot run --cells ViTModel::test_executorch_export_dynamic_xnnpack --source zoo",
        ),
        (  # ExecuTorch generate, static cache, target; skiplisted
            "LlamaForCausalLM::test_executorch_export_generate_static_static_cache_xnnpack",
            "zoo",
            True,
            "export-bot run --cells LlamaForCausalLM::test_executorch_export_generate_static_static_cache_xnnpack "
            "--probe --source zoo",
        ),
        (
            "ViTModel::test_onnx_export_static",
            None,
            False,
            "export-bot run --cells ViTModel::test_onnx_export_static",
        ),
        (  # shell-quoted, to paste as printed
            "ViTModel::test_onnx_export_static",
            "/tmp/my models",
            False,
            "export-bot run --cells ViTModel::test_onnx_export_static --source '/tmp/my models'",
        ),
    ],
)
def test_repro_command_runs_the_cell(cell_id, source, probe, expected):
    command = repro_command(Cell.parse(cell_id), source, probe=probe)
    assert command == expected
    args = shlex.split(command)
    assert args[args.index("--cells") + 1] == cell_id  # the whole id, so nothing but this cell


def test_the_diff_groups_newly_broken_and_new_failing_but_not_flaky_or_still_failing():
    def rs(*results, sha="h"):
        suite = SuiteInfo("j.xml", "export-bot", None, "zoo", sha, {}, len(results))
        return ResultSet({r.cell: r for r in results}, (), (), (suite,), ("j.xml",))

    passed = lambda cell_id: CellResult(Cell.parse(cell_id), Status.PASSED)  # noqa: E731
    base = rs(
        passed("BertModel::test_torch_export_static"),
        passed("ViTModel::test_torch_export_static"),
        failed("T5Model::test_torch_export_static", GUARD.format(n=0)),
        passed("GPT2Model::test_torch_export_static"),
    )
    head = rs(
        failed("BertModel::test_torch_export_static", GUARD.format(n=0), details=TRACEBACK.format(error="x")),
        failed("ViTModel::test_torch_export_static", GUARD.format(n=1)),  # re-run passed: flaky
        failed("T5Model::test_torch_export_static", GUARD.format(n=0)),  # still failing
        failed("GPT2Model::test_torch_export_static", GUARD.format(n=4)),
        failed("CLIPModel::test_torch_export_static", GUARD.format(n=2)),  # new failing
    )
    rerun = rs(passed("ViTModel::test_torch_export_static"))
    report = diff(base, head, load_skiplists(SKIPLISTS), rerun, changed_lines={MODELING: [(639, 639)]})
    [group] = report.groups
    assert set(group.cells) == {
        "BertModel::test_torch_export_static",
        "GPT2Model::test_torch_export_static",
        "CLIPModel::test_torch_export_static",
    }
    assert group.culprit.changed and group.repro.endswith("--source zoo")
    assert diff(base, head, load_skiplists(SKIPLISTS), rerun, group=False).groups == ()
