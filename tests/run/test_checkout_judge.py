"""The checkout's own export tests judge its cells: unittest protocol per cell, the TOML skiplists drive its tables."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
import unittest
import warnings
from pathlib import Path

import pytest

from bot.cells import Cell
from bot.models.sources import get_source
from bot.outcomes import Status
from bot.run.checkout_tests import (
    execute_by_checkout,
    install_tables,
    judged_by_checkout,
    narrowed,
    run_method,
)
from tests.conftest import ROOT
from tests.run.plugin_helpers import read_junit, write_skiplists

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}  # this worktree's bot, whatever `bot` the environment installed


def export_checkout(root: Path) -> Path:
    """The fixture checkout with the causal-LM Llama and an export test module of its own."""
    shutil.copytree(FIXTURES / "transformers_checkout", root)
    for overlay in ("transformers_checkout_causal_lm", "transformers_checkout_export"):
        shutil.copytree(FIXTURES / overlay, root, dirs_exist_ok=True)
    return root


# A BERT whose outputs drift between calls: its export runs, and a comparison of values with eager fails it.
DRIFT = '''
"""A BERT whose outputs drift between calls."""
import unittest
import torch
from transformers import BertModel
from ...test_modeling_common import ModelTesterMixin
from ..bert.test_modeling_bert import BertModelTester

class DriftModel(BertModel):
    def forward(self, **inputs):
        return {"hidden": super().forward(**inputs).last_hidden_state + torch.rand(1)}

class DriftModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (DriftModel,)
    def setUp(self):
        self.model_tester = BertModelTester(self)
'''


def add_drifting_model(root: Path) -> Path:
    """Add `DriftModel` (tests/models/drift) to a checkout."""
    folder = root / "tests" / "models" / "drift"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "test_modeling_drift.py").write_text(DRIFT)
    return root


class _Widget:
    """Stands in for a model class: the synthetic tests below only read its name."""


class _Gadget:
    pass


class _Synthetic(unittest.TestCase):
    """Test methods in the export module's shape, each with one outcome, and no export at all."""

    __test__ = False  # run by the judge under test, not collected by this pytest
    all_model_classes = (_Widget, _Gadget)

    def test_torch_export_static(self):
        for model_class in self.all_model_classes:
            for name in ("prefill", "decode"):
                with self.subTest(f"{model_class.__name__}/{name}"):
                    self.assertEqual(name, "prefill" if model_class is _Gadget else name, "decode outputs differ")

    def test_onnx_export_static(self):
        self.skipTest(reason="onnxscript is too old for this test")

    def test_openvino_export_static(self):
        warnings.warn("_Widget passes without exporting", UserWarning, stacklevel=2)
        for model_class in self.all_model_classes:
            with self.subTest(f"{model_class.__name__}/model"):
                pass

    def test_torch_export_dynamic(self):
        raise RuntimeError("the tester could not prepare inputs")

    def test_executorch_export_static_xnnpack(self):
        for model_class in self.all_model_classes:
            with self.subTest(f"{model_class.__name__}/decode"):
                self.skipTest("runtime limit 0x20")

    def test_onnx_export_dynamic(self):
        self.assertEqual(1, 2, "count")


class _Inferring(unittest.TestCase):
    """A tester in upstream's causal-LM shape: `setUp()` infers the classes and refuses a test class that set them."""

    __test__ = False
    all_model_classes = None
    pipeline_model_mapping = None

    def setUp(self):
        if self.pipeline_model_mapping is None:
            if self.all_model_classes is not None:
                raise ValueError("set all_model_classes, so must manually set pipeline_model_mapping")
            self.pipeline_model_mapping = {"feature-extraction": _Widget, "text-generation": _Gadget}
        if self.all_model_classes is None:
            self.all_model_classes = (_Widget, _Gadget)

    @property
    def all_generative_model_classes(self):
        return tuple(c for c in self.all_model_classes if c is _Gadget)

    def test_torch_export_generate_static(self):
        for model_class in self.all_generative_model_classes:
            with self.subTest(f"{model_class.__name__}/generate"):
                self.assertIs(self.pipeline_model_mapping["text-generation"], _Gadget)

    def test_torch_export_static(self):
        for model_class in self.all_model_classes:
            with self.subTest(f"{model_class.__name__}/model"):
                pass


def test_narrowing_runs_the_testers_own_set_up_and_narrows_what_it_produced():
    verdict = run_method(narrowed(_Inferring, _Widget, generate=False), "test_torch_export_static")
    assert (verdict.status, [name for name, _, _ in verdict.components]) == (Status.PASSED, ["_Widget/model"])
    generate = run_method(narrowed(_Inferring, _Gadget, generate=True), "test_torch_export_generate_static")
    assert (generate.status, [name for name, _, _ in generate.components]) == (Status.PASSED, ["_Gadget/generate"])
    # The mixin's property still derives the generative classes from the narrowed list.
    none = run_method(narrowed(_Inferring, _Widget, generate=True), "test_torch_export_generate_static")
    assert (none.status, none.components) == (Status.PASSED, ())


def test_setting_the_class_attribute_instead_breaks_such_a_tester():
    """Why the narrowing waits for `setUp()`: the class attribute is what the causal-LM guard refuses."""
    by_class = type("_Inferring", (_Inferring,), {"all_model_classes": (_Widget,)})
    verdict = run_method(by_class, "test_torch_export_static")
    assert verdict.status is Status.FAILED and verdict.message.startswith("ValueError: set all_model_classes")


def test_a_failing_subtest_is_the_failing_component_with_its_assertion():
    verdict = run_method(narrowed(_Synthetic, _Gadget, generate=False), "test_torch_export_static")
    assert verdict.status is Status.FAILED and verdict.component == "_Gadget/decode"
    assert verdict.message.startswith("AssertionError: 'decode' != 'prefill'")
    assert [(name, status) for name, status, _ in verdict.components] == [
        ("_Gadget/prefill", "passed"),
        ("_Gadget/decode", "failed"),
    ]


def test_narrowing_leaves_the_other_classes_out():
    verdict = run_method(narrowed(_Synthetic, _Widget, generate=False), "test_torch_export_static")
    assert verdict.status is Status.PASSED
    assert [name for name, _, _ in verdict.components] == ["_Widget/prefill", "_Widget/decode"]


def test_a_skip_keeps_the_tests_own_reason_and_warnings_are_kept():
    skipped = run_method(narrowed(_Synthetic, _Widget, generate=False), "test_onnx_export_static")
    assert (skipped.status, skipped.message) == (Status.SKIPPED, "onnxscript is too old for this test")
    warned = run_method(narrowed(_Synthetic, _Widget, generate=False), "test_openvino_export_static")
    assert warned.status is Status.PASSED
    assert warned.warnings == ("UserWarning: _Widget passes without exporting",)


def test_an_error_outside_any_subtest_fails_the_cell_with_its_traceback():
    verdict = run_method(narrowed(_Synthetic, _Widget, generate=False), "test_torch_export_dynamic")
    assert verdict.status is Status.FAILED and verdict.component is None
    assert verdict.message == "RuntimeError: the tester could not prepare inputs"
    assert "Traceback" in verdict.details


def test_a_skip_inside_a_subtest_is_that_component_and_an_assertion_outside_one_is_the_tests():
    limited = run_method(narrowed(_Synthetic, _Widget, generate=False), "test_executorch_export_static_xnnpack")
    assert (limited.status, limited.message) == (Status.SKIPPED, "runtime limit 0x20")
    assert limited.components == (("_Widget/decode", "skipped", "runtime limit 0x20"),)
    failed = run_method(narrowed(_Synthetic, _Widget, generate=False), "test_onnx_export_dynamic")
    assert (failed.status, failed.component, failed.message) == (Status.FAILED, None, "AssertionError: 1 != 2 : count")


def test_the_toml_skiplists_replace_every_table_of_the_module_in_place(tmp_path):
    module = types.SimpleNamespace()
    module.EXPORT_SKIPS = skips = {"all": {"OldModel": "stale"}}
    module.ONNX_DISABLE_OPTIMIZE = {"all": {}}
    module.EXECUTORCH_PARTITION_EXCLUDE = {"xnnpack": {"KeptModel": "no TOML for this table: kept"}}
    folder = write_skiplists(tmp_path / "skiplists", '[dynamic]\nBertModel = "pooler"\n', '[all]\nT5Model = "slow"\n')
    assert install_tables(vars(module), folder) == {
        "EXPORT_SKIPS": "export_skips.toml",
        "ONNX_DISABLE_OPTIMIZE": "onnx_disable_optimize.toml",
    }
    assert module.EXPORT_SKIPS is skips and skips == {"dynamic": {"BertModel": "pooler"}}
    assert module.ONNX_DISABLE_OPTIMIZE == {"all": {"T5Model": "slow"}}
    assert module.EXECUTORCH_PARTITION_EXCLUDE == {"xnnpack": {"KeptModel": "no TOML for this table: kept"}}
    (folder / "executorch_partition_exclude.toml").write_text('[xnnpack]\nViTModel = "conv"\n')
    install_tables(vars(module), folder)
    assert module.EXECUTORCH_PARTITION_EXCLUDE == {"xnnpack": {"ViTModel": "conv"}}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    return export_checkout(tmp_path_factory.mktemp("export") / "checkout")


def test_a_skiplisted_cell_is_skipped_by_the_checkouts_own_scope_walk(checkout, tmp_path):
    source = get_source(f"transformers-tests:{checkout}")
    assert judged_by_checkout(source)
    folder = write_skiplists(tmp_path / "skiplists", '[dynamic]\nBertModel = "Dynamic pooler, see the issue."\n')
    run = execute_by_checkout(Cell.parse("BertModel::test_torch_export_dynamic"), source, folder)
    assert run.status is Status.SKIPPED and run.judge == "checkout:tests/exporters/test_export.py"
    assert run.message == "EXPORT_SKIPS['dynamic']: Dynamic pooler, see the issue."
    assert run.warnings == ("UserWarning: BertModel passes without exporting: it is in EXPORT_SKIPS",)
    probe = execute_by_checkout(Cell.parse("BertModel::test_torch_export_dynamic"), source, folder, probe=True)
    assert probe.probe and probe.status is Status.PASSED and probe.judge == run.judge  # run anyway, and it exports
    # Listed under `dynamic` only: the static cell is no probe (its verdict is main's real result),
    # and a backend the fixture does not export stays skipped for its own reason, no probe either.
    static = execute_by_checkout(Cell.parse("BertModel::test_torch_export_static"), source, folder, probe=True)
    assert not static.probe and static.status is Status.PASSED
    other = execute_by_checkout(Cell.parse("BertModel::test_onnx_export_dynamic"), source, folder, probe=True)
    assert not other.probe and other.status is Status.SKIPPED
    onnx = execute_by_checkout(Cell.parse("BertModel::test_onnx_export_static"), source, folder)
    assert (onnx.status, onnx.message) == (Status.SKIPPED, "this fixture's export tests use torch.export only")
    missing = execute_by_checkout(
        Cell.parse("LlamaForCausalLM::test_torch_export_generate_static_static_cache"), source, folder
    )
    assert missing.status is Status.NOT_BUILDABLE and "has no test method" in missing.message


def test_without_the_export_module_the_bots_rules_judge(tmp_path):
    shutil.copytree(FIXTURES / "transformers_checkout", tmp_path / "plain")
    assert not judged_by_checkout(get_source(f"transformers-tests:{tmp_path / 'plain'}"))
    assert not judged_by_checkout(get_source("zoo"))


@pytest.mark.export
def test_run_judges_bert_and_llama_by_the_checkouts_tests(checkout, tmp_path):
    """One pytest item per cell, the checkout's subTests as components, its skip tables driven by the TOML."""
    junit = tmp_path / "out.xml"
    folder = write_skiplists(tmp_path / "skiplists", '[generate]\nLlamaForCausalLM = "Prefill graph break."\n')
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{checkout}", "--skiplists"]
    command += [str(folder), "--models", "BertModel,LlamaForCausalLM", "--backends", "dynamo", "--shapes", "static"]
    result = subprocess.run(
        command + ["-n", "0", "--junit", str(junit)], cwd=tmp_path, capture_output=True, text=True, env=ENV
    )
    assert result.returncode == 0, result.stderr[-3000:]
    cases = read_junit(junit).cases
    bert = cases["BertModel::test_torch_export_static"]
    assert bert.outcome == "passed", bert.message
    assert bert.properties["judge"] == "checkout:tests/exporters/test_export.py"
    assert bert.properties["components"] == "BertModel/model"
    # Measured around the checkout's test: the cell's own peak memory (torch and a model: tens of MB).
    assert 30e6 < float(bert.properties["figure.peak_rss_bytes"]) < 8e9, bert.properties
    # And what it cost: the worker's CPU seconds while the cell ran (the comment's cost per backend).
    assert float(bert.properties["cpu_seconds"]) > 0.1, bert.properties
    llama = cases["LlamaForCausalLM::test_torch_export_static"]
    assert llama.outcome == "passed", (llama.message, llama.text[-2000:])
    generate = cases["LlamaForCausalLM::test_torch_export_generate_static"]
    assert (generate.outcome, generate.message) == ("skipped", "EXPORT_SKIPS['generate']: Prefill graph break.")
