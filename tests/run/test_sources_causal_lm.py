"""Upstream's causal-LM testers: the tester names only its base class, the test class lists its classes in setUp().

The fixture checkout with its Llama tester in that shape (tests/fixtures/transformers_checkout_causal_lm
laid over tests/fixtures/transformers_checkout): the source must list, build and generate every
class the tester really covers, or a PR that breaks Llama export runs no Llama cell.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot.cells import cells_for
from bot.models.sources import get_source
from bot.models.sources.tester_text import read_module
from bot.run.selection import CellRequest, select_from_source
from tests.conftest import ROOT, SKIPLISTS
from tests.run.plugin_helpers import read_junit

torch = pytest.importorskip("torch")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LLAMA = (
    "LlamaModel",
    "LlamaForCausalLM",
    "LlamaForSequenceClassification",
    "LlamaForQuestionAnswering",
    "LlamaForTokenClassification",
)


# This worktree's bot, whatever `bot` the environment installed.
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def causal_lm_checkout(root: Path) -> Path:
    """The fixture checkout with the causal-LM overlay (its Llama tester and tests/causal_lm_tester.py)."""
    shutil.copytree(FIXTURES / "transformers_checkout", root)
    shutil.copytree(FIXTURES / "transformers_checkout_causal_lm", root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    return causal_lm_checkout(tmp_path_factory.mktemp("causal_lm") / "checkout")


@pytest.fixture(scope="module")
def source(checkout):
    return get_source(f"transformers-tests:{checkout}")


def test_the_text_says_what_is_left_to_infer(checkout):
    module = read_module(checkout, checkout / "tests/models/llama/test_modeling_llama.py")
    [test_class] = [c for c in module.classes if c.name == "LlamaModelTest"]
    assert test_class.listed == ("LlamaModel",)
    assert test_class.infer_from == "LlamaModel"
    assert test_class.infer_suffixes == (
        "ForCausalLM",
        "ForSequenceClassification",
        "ForQuestionAnswering",
        "ForTokenClassification",
    )


def test_a_tester_that_spells_every_class_infers_nothing(tmp_path):
    path = tmp_path / "tests" / "models" / "x" / "test_modeling_x.py"
    path.parent.mkdir(parents=True)
    text = textwrap.dedent(
        """
        class XModelTester(CausalLMModelTester):
            base_model_class = XModel
            causal_lm_class = XForCausalLM
            sequence_classification_class = None
            question_answering_class = None
            token_classification_class = None
        class XModelTest(CausalLMModelTest, unittest.TestCase):
            model_tester_class = XModelTester
        """
    )
    [_, test_class] = read_module(tmp_path, path, text).classes
    assert test_class.listed == ("XModel", "XForCausalLM")
    assert test_class.infer_from is None and test_class.infer_suffixes == ()


def test_lists_the_inferred_classes_and_the_generative_one(source):
    infos = {i.model_class: i for i in source.classes() if i.model_type == "llama"}
    assert tuple(infos) == LLAMA
    assert {n for n, i in infos.items() if i.generative} == {"LlamaForCausalLM"}
    assert {i.family for i in infos.values()} == {"decoder"}


@pytest.mark.parametrize("name", LLAMA)
def test_builds_every_inferred_class_after_set_up(source, name):
    built = source.build(name, generate=False)
    assert built.model_class.__name__ == name
    with torch.no_grad():
        outputs = built.model_class(built.config).eval()(**built.inputs)
    assert any(torch.is_tensor(v) for v in outputs.values())
    assert source.target(name, generate=False).gate_class.__name__ == "LlamaModel"  # the test class's first


def test_builds_the_generate_inputs_of_the_causal_lm(source):
    built = source.build("LlamaForCausalLM", generate=True)
    assert set(built.inputs) == {"input_ids", "attention_mask"} and built.config.eos_token_id is None


def test_models_llama_for_causal_lm_selects_its_generate_cells(source):
    cells = select_from_source(CellRequest(models=("LlamaForCausalLM",)), source)
    assert cells == list(cells_for("LlamaForCausalLM", generative=True))
    assert sum(cell.path == "generate" for cell in cells) == 16


def test_the_smoke_preset_keeps_the_causal_lm(source):
    assert "LlamaForCausalLM" in source.presets()["smoke"]


def test_run_exits_2_when_no_cell_could_be_built(checkout, tmp_path):
    junit = tmp_path / "out.xml"
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{checkout}"]
    command += ["--skiplists", str(SKIPLISTS), "--models", "NoSuchModel", "--backends", "dynamo", "-n", "0"]
    result = subprocess.run(command + ["--junit", str(junit)], cwd=tmp_path, capture_output=True, text=True, env=ENV)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "nothing could be built" in result.stderr.splitlines()[-1]
    assert {case.kind for case in read_junit(junit).cases.values()} == {"not-buildable"}


@pytest.mark.export
def test_llama_generate_cells_run_on_dynamo(checkout, tmp_path):
    """The gap itself: a run of the causal LM exports it, forward and generate, instead of reporting nothing."""
    junit = tmp_path / "out.xml"
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{checkout}"]
    command += ["--skiplists", str(SKIPLISTS), "--models", "LlamaForCausalLM", "--backends", "dynamo"]
    command += ["--shapes", "static", "-n", "0", "--junit", str(junit)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=ENV)
    assert result.returncode == 0, result.stderr[-3000:]
    cases = read_junit(junit).cases
    assert sum("_generate_" in cell for cell in cases) == 2 and len(cases) == 3
    assert {case.outcome for case in cases.values()} <= {"passed", "skipped"}, {c: x.message for c, x in cases.items()}
    assert any(case.outcome == "passed" and "_generate_" in cell for cell, case in cases.items())
