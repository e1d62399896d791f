"""The upstream test module's verdict rules, one table per rule, each row stating the rule it checks.

Upstream here means the seed test module the bot grew from (docs/runner.md follows it step by step).
"""

from __future__ import annotations

import copy

import pytest
import torch

from bot.cells import Cell
from bot.models.sources.base import BuildError, Built, Target
from bot.models.sources.tester_text import generate_eligible
from bot.outcomes import STAGES, Status
from bot.run import backends, gates
from bot.run.execute import execute_cell as execute_by_rules
from bot.run.junit import run_properties
from tests.run.test_execute import FakeBackend, TinySource, skiplists, tiny_llama

# ---- torch version gate -------------------------------------------------------------------

TORCH_GATE = [
    # (installed, backend, skipped, upstream rule)
    ("2.13.0+cpu", "dynamo", False, "version.parse(torch) >= version.parse(min): a local build tag is still 2.13.0"),
    ("2.11.0", "onnx", False, "the minimum itself runs"),
    ("2.10.1", "dynamo", True, "older than DynamoExporter.min_versions['torch']: skipped, not failed"),
    ("2.11.0a0", "executorch", True, "a pre-release sorts below 2.11.0; require_torch_greater_or_equal skips it"),
    ("2.11.0.dev20250101", "onnx", True, "a dev build too (upstream accepts dev builds only with accept_dev)"),
    ("2.10.1", "openvino", False, "the OpenVINO tests carry no require_torch_greater_or_equal"),
    ("2.11.0a0", "openvino", False, "…so no torch version skips an OpenVINO cell"),
]


def execute_cell(*args, **kwargs):
    """The cell judged by the seed's rules, the profile these tests pin down."""
    return execute_by_rules(*args, rules="seed-1", **kwargs)


def _id(value) -> str:
    """Stable ids across xdist workers: sets sorted, objects by class name (no addresses)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(value)) + "}"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return str(value)
    return str(value) if type(value).__repr__ is not object.__repr__ else type(value).__name__


@pytest.mark.parametrize(("installed", "backend", "skipped", "rule"), TORCH_GATE, ids=lambda v: str(v)[:20])
def test_torch_gate_follows_upstream(installed, backend, skipped, rule):
    gate = gates.torch_gate(installed, "2.11.0", backend)
    assert (gate is not None) is skipped, rule
    if gate:
        assert gate.scope == "env:torch-too-old"


# ---- a missing backend package -------------------------------------------------------------

BACKEND_PACKAGES = [
    # (backend, missing package, skipped, upstream rule)
    ("onnx", "onnxruntime", True, "test_onnx_export carries @require_onnxruntime: skipped when it is missing"),
    ("onnx", "onnxscript", True, "…and @require_onnxscript"),
    ("openvino", "openvino", True, "test_openvino_export carries @require_openvino"),
    ("executorch", "executorch", True, "test_executorch_export carries @require_executorch"),
    ("dynamo", "onnxruntime", False, "torch.export needs no backend package"),
    ("openvino", "onnxruntime", False, "a package another backend needs does not matter"),
]


@pytest.mark.parametrize(("backend", "missing", "skipped", "rule"), BACKEND_PACKAGES)
def test_backend_package_gate_follows_upstream(backend, missing, skipped, rule):
    gate = gates.backend_gate(backend, lambda package: package != missing)
    assert (gate is not None) is skipped, rule
    if gate:
        assert gate.scope == "env:backend-missing" and missing in gate.reason


def test_a_missing_backend_package_skips_the_cell_with_the_reason(monkeypatch):
    """Upstream: `@require_onnxruntime` skips the test; the bot used to fail it at stage export."""
    from transformers.utils import import_utils

    monkeypatch.setattr(import_utils, "is_onnxruntime_available", lambda: False)
    monkeypatch.setattr(backends, "load_backend", lambda name: pytest.fail("a gated cell must not load its backend"))
    run = execute_cell(Cell("BertModel", "onnx"), TinySource(), skiplists())
    assert (run.status, run.skip_scope) == (Status.SKIPPED, "env:backend-missing")
    assert run.message == "test requires onnxruntime, which is not installed"


# ---- generate eligibility ------------------------------------------------------------------

ELIGIBILITY = [
    # (ancestor names of the test class, runs generate, upstream rule)
    ({"ModelTesterMixin", "ExportTesterMixin", "ExportGenerateTesterMixin", "GenerationTesterMixin"}, True,
     "generate export tests live on ExportGenerateTesterMixin: a test class that mixes it in runs them"),
    ({"ModelTesterMixin", "ExportTesterMixin", "GenerationTesterMixin"}, False,
     "GenerationTesterMixin alone does not bring the generate export tests"),
    ({"ModelTesterMixin", "ExportTesterMixin"}, False, "forward export tests only"),
    ({"ModelTesterMixin", "GenerationTesterMixin"}, True,
     "a checkout with no export mixins at all predates them: generate follows GenerationTesterMixin (the bot's own rule)"),
]  # fmt: skip


@pytest.mark.parametrize(("ancestors", "eligible", "rule"), ELIGIBILITY)
def test_generate_eligibility_follows_the_mixin(ancestors, eligible, rule):
    assert generate_eligible(frozenset(ancestors)) is eligible, rule


# ---- gates before the build ----------------------------------------------------------------


class GatedSource(TinySource):
    """Its tester raises for a class upstream would never build: `target` says why first."""

    def __init__(self, target: Target):
        super().__init__()
        self._target = target

    def target(self, model_class: str, *, generate: bool) -> Target:
        return self._target

    def build(self, model_class: str, *, generate: bool) -> Built:
        self.built.append(model_class)
        raise BuildError("the tester raised for a class it cannot serve")


class NoFullgraph(torch.nn.Module):
    _can_compile_fullgraph = False


GATE_ORDER = [
    # (cell, target, skip scope, upstream rule)
    (Cell("BertModel", "dynamo"), Target(torch.nn.Module, exportable=False), "env:not-exportable",
     "_skip_if_not_exportable runs first in every export test, before _prepare_export_model_and_inputs"),
    (Cell("LlamaForCausalLM", "onnx", "static", "generate", "static"), Target(NoFullgraph), "env:static-cache-unsupported",
     "_should_skip's `_can_compile_fullgraph` check comes before the generate inputs are prepared"),
]  # fmt: skip


@pytest.mark.parametrize(("cell", "target", "scope", "rule"), GATE_ORDER, ids=str)
def test_gates_run_before_the_build(monkeypatch, cell, target, scope, rule):
    monkeypatch.setattr(backends, "load_backend", lambda name: FakeBackend())
    source = GatedSource(target)
    run = execute_cell(cell, source, skiplists())
    assert (run.status, run.skip_scope) == (Status.SKIPPED, scope), rule
    assert source.built == [], "the tester is never asked to build a gated class"


def test_the_eager_moe_gate_reads_the_test_class_first_model_file(monkeypatch, tmp_path):
    """Upstream reads `inspect.getfile(self.all_model_classes[0])`: the first class's file, not this class's."""
    import importlib.util
    import sys

    path = tmp_path / "modeling_moe_first.py"
    path.write_text(
        "class First:\n    def forward(self):\n        for " + "expert in self.experts:\n            pass\n"
    )
    spec = importlib.util.spec_from_file_location("modeling_moe_first", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "modeling_moe_first", module)
    spec.loader.exec_module(module)
    source = GatedSource(Target(torch.nn.Module, exportable=True, gate_class=module.First))
    run = execute_cell(Cell("BertModel", "dynamo"), source, skiplists())
    assert (run.status, run.skip_scope, source.built) == (Status.SKIPPED, "env:eager-moe", [])


# ---- ExecuTorch runtime limits -------------------------------------------------------------


class LimitedBackend(FakeBackend):
    """Hits an ExecuTorch runtime limit on the components named in `limited`."""

    def __init__(self, limited: set[str]):
        super().__init__()
        self.limited, self.seen = limited, 0

    def run(self, program, inputs):
        from transformers.exporters.utils import get_leaf_tensors

        name = "prefill" if self.seen == 0 else "decode"
        self.seen += 1
        if name in self.limited:
            raise backends.RuntimeLimit(
                "executorch-runtime-limit", "RuntimeError: method.execute() failed with error 0x12"
            )
        with torch.no_grad():
            return list(get_leaf_tensors(program(**copy.deepcopy(inputs))).values())


RUNTIME_LIMITS = [
    # (limited components, status, compared, upstream rule)
    ({"decode"}, Status.PASSED, "count",
     "_run_executorch_program returns None on a runtime limit and the test `continue`s: that component is skipped, "
     "the others are still checked, and the test passes"),
    ({"prefill", "decode"}, Status.PASSED, "none",
     "every component limited: no assertion fails, so upstream passes too; the bot says nothing was compared"),
    (set(), Status.PASSED, "count", "no limit: the output counts are compared"),
]  # fmt: skip


@pytest.mark.parametrize(("limited", "status", "compared", "rule"), RUNTIME_LIMITS, ids=_id)
def test_executorch_runtime_limits_are_per_component(monkeypatch, limited, status, compared, rule):
    monkeypatch.setattr(backends, "load_backend", lambda name: LimitedBackend(limited))
    cell = Cell("LlamaForCausalLM", "executorch", "static", "generate", "dynamic", "xnnpack")
    run = execute_cell(cell, TinySource(), skiplists())
    assert (run.status, run.compared) == (status, compared), rule
    assert {c.name for c in run.components if c.status == "skipped"} == limited
    properties = dict(run_properties(run))
    assert properties["compared"] == compared
    if limited:
        assert properties["runtime_limit"].endswith("error 0x12")


# ---- what a pass compared ------------------------------------------------------------------

COMPARED = [
    # (cell, compared, upstream rule)
    (Cell("BertModel", "dynamo"), "values", "test_torch_export: _check_outputs_close at 1e-4"),
    (Cell("BertModel", "onnx"), "values", "test_onnx_export: output names, then _check_outputs_close at 1e-3"),
    (Cell("BertModel", "openvino", "dynamic"), "values", "test_openvino_export: names, then values"),
    (Cell("BertModel", "executorch", target="xnnpack"), "count", "test_executorch_export: len(outputs) only"),
    (Cell("LlamaForCausalLM", "dynamo", "static", "generate", "dynamic"), "values",
     "test_torch_export_generate: values"),
    (Cell("LlamaForCausalLM", "onnx", "static", "generate", "static"), "names",
     "test_onnx_export_generate: assertEqual on the output names only"),
    (Cell("LlamaForCausalLM", "openvino", "dynamic", "generate", "dynamic"), "names",
     "test_openvino_export_generate: output names only"),
]  # fmt: skip


class ListBackend(FakeBackend):
    """ExecuTorch outputs are unnamed: a list, as the real backend returns them."""

    def run(self, program, inputs):
        outputs = super().run(program, inputs)
        return list(outputs.values())


@pytest.mark.parametrize(("cell", "compared", "rule"), COMPARED, ids=str)
def test_a_pass_records_what_it_compared(monkeypatch, cell, compared, rule):
    backend = ListBackend() if cell.backend == "executorch" else FakeBackend()
    monkeypatch.setattr(backends, "load_backend", lambda name: backend)
    run = execute_cell(cell, TinySource(), skiplists())
    assert run.status is Status.PASSED and run.compared == compared, rule
    assert ("compared", compared) in run_properties(run)


def test_an_uncompared_pass_records_no_comparison(monkeypatch):
    monkeypatch.setattr(backends, "load_backend", lambda name: FakeBackend())
    run = execute_cell(Cell("BertModel", "onnx"), TinySource(), skiplists({"onnx.exactness": {"BertModel": "noise"}}))
    assert run.status is Status.PASSED_UNCOMPARED
    assert "compared" not in dict(run_properties(run))


# ---- stage names ---------------------------------------------------------------------------


class CaptureBreaks(TinySource):
    """Generate inputs whose ids are out of the vocabulary: `generate()` raises while capturing."""

    def build(self, model_class: str, *, generate: bool) -> Built:
        built = tiny_llama()
        return Built(built.model_class, built.config, {**built.inputs, "input_ids": built.inputs["input_ids"] + 1000})


STAGE_NAMES = [
    # (cell, source, stage, upstream step)
    (Cell("LlamaForCausalLM", "dynamo", "static", "generate", "dynamic"), CaptureBreaks(), "capture",
     "_prepare_export_generate_model_and_inputs: decompose_for_generation calls generate() to capture the inputs"),
    (Cell("LlamaForCausalLM", "dynamo"), CaptureBreaks(), "eager",
     "a forward cell has nothing to capture: _collect_eager_outputs is where the same inputs break"),
]  # fmt: skip


@pytest.mark.parametrize(("cell", "source", "stage", "rule"), STAGE_NAMES, ids=_id)
def test_failures_name_the_upstream_step(monkeypatch, cell, source, stage, rule):
    monkeypatch.setattr(backends, "load_backend", lambda name: FakeBackend())
    run = execute_cell(cell, source, skiplists())
    assert (run.status, run.stage) == (Status.FAILED, stage), rule
    assert stage in STAGES
