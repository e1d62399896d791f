"""The `transformers-tests:PATH` source over the fixture checkout, and over broken checkouts."""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from bot.run.sources import BuildError, NotBuildable, SourceError, get_source

torch = pytest.importorskip("torch")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "transformers_checkout"


@pytest.fixture(scope="module")
def source():
    return get_source(f"transformers-tests:{FIXTURE}")


def test_lists_the_fixture_classes(source):
    infos = {i.model_class: i for i in source.classes()}
    assert list(infos) == [
        "BertModel",
        "BertForSequenceClassification",
        "BertForMultipleChoice",
        "LlamaModel",
        "LlamaForCausalLM",
    ]
    assert {n for n, i in infos.items() if i.generative} == {"LlamaForCausalLM"}
    assert infos["BertModel"].model_type == "bert" and infos["BertModel"].family == "text-encoder"
    assert infos["LlamaModel"].family == infos["LlamaForCausalLM"].family == "decoder"


def test_presets_come_from_the_checkout(source):
    presets = source.presets()
    assert presets["all"] == tuple(i.model_class for i in source.classes())
    assert presets["smoke"] == ("BertModel", "LlamaForCausalLM")
    assert set(presets["core"]) <= set(presets["all"])


@pytest.mark.parametrize(
    "name", ["BertModel", "BertForSequenceClassification", "BertForMultipleChoice", "LlamaModel", "LlamaForCausalLM"]
)
def test_builds_forward_through_the_tester(source, name):
    built = source.build(name, generate=False)
    assert built.model_class.__name__ == name and built.exportable
    model = built.model_class(built.config).eval()
    with torch.no_grad():
        outputs = model(**built.inputs)
    assert any(torch.is_tensor(v) for v in outputs.values())


def test_prepare_for_class_is_applied(source):
    # Upstream's _prepare_for_class expands multiple-choice inputs to [batch, choices, seq].
    assert source.build("BertForMultipleChoice", generate=False).inputs["input_ids"].shape == (2, 3, 7)
    assert source.build("BertModel", generate=False).inputs["input_ids"].shape == (2, 7)


def test_builds_generate_inputs(source):
    built = source.build("LlamaForCausalLM", generate=True)
    assert set(built.inputs) == {"input_ids", "attention_mask"}
    assert built.config.eos_token_id is None  # prepare_config_and_inputs_for_generate's rule
    model = built.model_class(built.config).eval()
    with torch.no_grad():
        sequences = model.generate(**built.inputs, max_new_tokens=2, do_sample=False)
    assert sequences.shape == (2, 9)


def test_builds_are_fresh_and_reproducible(source):
    first, second = source.build("BertModel", generate=False), source.build("BertModel", generate=False)
    assert first.config is not second.config
    assert all(torch.equal(first.inputs[k], second.inputs[k]) for k in first.inputs)


def test_generate_of_a_forward_only_class_is_a_build_error(source):
    with pytest.raises(BuildError, match="BertModel is not in .*all_generative_model_classes"):
        source.build("BertModel", generate=True)


def test_a_class_no_test_class_lists_is_not_buildable(source):
    with pytest.raises(NotBuildable, match="lists NoSuchModel"):
        source.build("NoSuchModel", generate=False)


def test_reading_leaves_another_tests_package_in_place(source):
    before = sys.modules.get("tests")
    get_source(f"transformers-tests:{FIXTURE}").classes()
    assert sys.modules.get("tests") is before


def _checkout(tmp_path: Path, model_type: str, body: str) -> Path:
    """The fixture checkout plus one extra model test module."""
    root = tmp_path / "checkout"
    shutil.copytree(FIXTURE, root)
    folder = root / "tests" / "models" / model_type
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / f"test_modeling_{model_type}.py").write_text(textwrap.dedent(body))
    return root


def test_a_module_that_fails_to_import_lists_its_classes_as_build_errors(tmp_path):
    root = _checkout(
        tmp_path,
        "broken",
        """
        import unittest
        import no_such_dependency
        from transformers import is_torch_available
        class BrokenModelTest(unittest.TestCase):
            all_model_classes = (BrokenModel, BrokenForCausalLM) if is_torch_available() else ()
    """,
    )
    source = get_source(f"transformers-tests:{root}")
    infos = {i.model_class: i for i in source.classes()}
    assert {"BrokenModel", "BrokenForCausalLM", "BertModel"} <= set(infos)
    with pytest.raises(BuildError, match="No module named 'no_such_dependency'"):
        source.build("BrokenModel", generate=False)
    source.build("BertModel", generate=False)  # the other modules still build


def test_a_tester_that_raises_is_a_build_error(tmp_path):
    root = _checkout(
        tmp_path,
        "gpt2",
        """
        import unittest
        from transformers import GPT2Model
        from ...test_modeling_common import ModelTesterMixin
        class Tester:
            def __init__(self, parent):
                pass
            def prepare_config_and_inputs_for_common(self):
                raise RuntimeError("tester is broken")
        class GPT2ModelTest(ModelTesterMixin, unittest.TestCase):
            all_model_classes = (GPT2Model,)
            test_torch_exportable = False
            def setUp(self):
                self.model_tester = Tester(self)
    """,
    )
    source = get_source(f"transformers-tests:{root}")
    with pytest.raises(BuildError, match="GPT2ModelTest: the model tester raised RuntimeError: tester is broken"):
        source.build("GPT2Model", generate=False)


def test_exportable_flag_and_per_class_preparation(tmp_path):
    root = _checkout(
        tmp_path,
        "gpt2",
        """
        import unittest
        from transformers import GPT2Config, GPT2Model
        from ...test_modeling_common import ModelTesterMixin, ids_tensor
        class Tester:
            def __init__(self, parent):
                pass
            def prepare_config_and_inputs_for_model_class(self, model_class):
                config = GPT2Config(vocab_size=99, n_embd=32, n_layer=1, n_head=2, n_positions=16)
                return config, {"input_ids": ids_tensor([2, 5], 99), "for": model_class.__name__}
        class GPT2ModelTest(ModelTesterMixin, unittest.TestCase):
            all_model_classes = (GPT2Model,)
            test_torch_exportable = False
            def setUp(self):
                self.model_tester = Tester(self)
    """,
    )
    built = get_source(f"transformers-tests:{root}").build("GPT2Model", generate=False)
    assert built.exportable is False
    assert built.inputs["for"] == "GPT2Model"


def test_a_setup_that_raises_is_a_build_error(tmp_path):
    root = _checkout(
        tmp_path,
        "gpt2",
        """
        import unittest
        from transformers import GPT2Model
        class GPT2ModelTest(unittest.TestCase):
            all_model_classes = (GPT2Model,)
            def setUp(self):
                raise OSError("needs the hub")
    """,
    )
    with pytest.raises(BuildError, match=r"setUp\(\) raised OSError: needs the hub"):
        get_source(f"transformers-tests:{root}").build("GPT2Model", generate=False)


@pytest.mark.parametrize("layout", ["no-tests", "no-models", "empty-models"])
def test_bad_checkout_is_a_source_error(tmp_path, layout):
    if layout == "no-models":
        (tmp_path / "tests").mkdir()
    elif layout == "empty-models":
        (tmp_path / "tests" / "models").mkdir(parents=True)
    match = "no tests/models/\\*/test_modeling_\\*.py" if layout == "empty-models" else "tests/models is missing"
    with pytest.raises(SourceError, match=match):
        get_source(f"transformers-tests:{tmp_path}")
