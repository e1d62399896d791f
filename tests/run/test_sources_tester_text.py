"""Reading test modules as text: test classes, what they list, and their ancestors across the checkout's files."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bot.models.sources.tester_text import CheckoutText, family_from_text, read_module

MODULE = """
import unittest

from transformers import is_torch_available

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...generation.test_utils import GenerationTesterMixin as GTM
from ...test_modeling_common import (
    ModelTesterMixin,
    ids_tensor,  # a helper
)

if is_torch_available():
    from transformers import GemmaForCausalLM, GemmaModel


class GemmaModelTester(CausalLMModelTester):
    if is_torch_available():
        base_model_class = GemmaModel
        causal_lm_class = GemmaForCausalLM


class GemmaModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = GemmaModelTester
    test_torch_exportable = False


class GemmaOtherTest(ModelTesterMixin, GTM, unittest.TestCase):
    all_model_classes = (
        (GemmaModel,)  # the base model
        + (GemmaForCausalLM,)
        if is_torch_available()
        else ()
    )
    all_generative_model_classes: tuple = ()

    def test_something(self):
        all_model_classes = "not a class-level assignment"
        inputs = {"input_ids": ids_tensor([2, 3], 9)}
"""


def _tree(tmp_path: Path) -> Path:
    files = {
        "tests/__init__.py": "",
        "tests/models/__init__.py": "",
        "tests/models/gemma/__init__.py": "",
        "tests/models/gemma/test_modeling_gemma.py": MODULE,
        "tests/causal_lm_tester.py": (
            "from .generation.test_utils import GenerationTesterMixin\n"
            "from .test_modeling_common import ModelTesterMixin\n"
            "from .test_export_common import ExportGenerateTesterMixin\n"
            "class CausalLMModelTester:\n    pass\n"
            "class CausalLMModelTest(ModelTesterMixin, GenerationTesterMixin, ExportGenerateTesterMixin):\n    pass\n"
        ),
        "tests/test_modeling_common.py": (
            "from .test_export_common import ExportTesterMixin\nclass ModelTesterMixin(ExportTesterMixin):\n    pass\n"
        ),
        "tests/test_export_common.py": (
            "class ExportTesterMixin:\n    pass\nclass ExportGenerateTesterMixin(ExportTesterMixin):\n    pass\n"
        ),
        "tests/generation/__init__.py": "",
        "tests/generation/test_utils.py": "class GenerationTesterMixin:\n    pass\n",
    }
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path / "tests/models/gemma/test_modeling_gemma.py"


def test_test_classes_and_what_they_list(tmp_path):
    path = _tree(tmp_path)
    module = read_module(tmp_path, path)
    classes = {c.name: c for c in module.classes}
    assert set(classes) == {"GemmaModelTester", "GemmaModelTest", "GemmaOtherTest"}
    # CausalLMModelTest lists its classes through the tester's `*_class` attributes.
    assert classes["GemmaModelTest"].listed == ("GemmaModel", "GemmaForCausalLM")
    assert classes["GemmaModelTest"].exportable is False and classes["GemmaModelTest"].generative is None
    assert classes["GemmaOtherTest"].listed == ("GemmaModel", "GemmaForCausalLM")
    assert classes["GemmaOtherTest"].generative == ()  # spelled out: none generates
    assert classes["GemmaOtherTest"].bases == ("ModelTesterMixin", "GTM", "TestCase")
    assert module.imports["GTM"] == (tmp_path / "tests/generation/test_utils.py", "GenerationTesterMixin")
    assert module.imports["ModelTesterMixin"] == (tmp_path / "tests/test_modeling_common.py", "ModelTesterMixin")
    assert module.inputs == frozenset({"input_ids"})


def test_ancestors_follow_imports_across_the_checkout(tmp_path):
    path = _tree(tmp_path)
    text = CheckoutText(tmp_path)
    assert {"CausalLMModelTest", "ModelTesterMixin", "ExportGenerateTesterMixin", "ExportTesterMixin"} <= (
        text.ancestors(path, "GemmaModelTest")
    )
    # Imported under another name: the alias is followed to the class it names.
    other = text.ancestors(path, "GemmaOtherTest")
    assert {"GTM", "GenerationTesterMixin", "ExportTesterMixin"} <= other
    assert "ExportGenerateTesterMixin" not in other


def test_family_comes_from_the_inputs_before_the_name():
    assert family_from_text(frozenset({"pixel_values"}), "ViTModel", False) == "vision"
    assert family_from_text(frozenset({"input_features"}), "WhisperModel", False) == "audio"
    assert family_from_text(frozenset({"pixel_values", "input_ids"}), "LlavaForConditionalGeneration", True) == (
        "multimodal"
    )
    assert family_from_text(frozenset({"input_ids", "decoder_input_ids"}), "T5Model", False) == "encoder-decoder"
    assert family_from_text(frozenset({"input_ids"}), "LlamaModel", True) == "decoder"
    assert family_from_text(frozenset({"input_ids"}), "BertModel", False) == "text-encoder"
