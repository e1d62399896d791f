"""The `transformers-tests:PATH` source over the fixture checkout, and over broken checkouts."""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from bot.cells import cells_for
from bot.models.sources import BuildError, SourceError, get_source
from bot.models.sources.base import NotBuildable, SetupProblem

torch = pytest.importorskip("torch")

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "transformers_checkout"
# The same shape, but its shared generation helper raises ImportError: no test module imports.
BROKEN = FIXTURE.with_name("transformers_checkout_broken")


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


def test_generate_of_a_forward_only_class_is_not_buildable(source):
    with pytest.raises(NotBuildable, match="mixes in ExportGenerateTesterMixin.* lists BertModel"):
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


def test_a_module_that_fails_to_import_is_one_setup_problem(tmp_path):
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
    with pytest.raises(SetupProblem, match="No module named 'no_such_dependency'") as raised:
        source.build("BrokenModel", generate=False)
    assert raised.value.origin == raised.value.module == "tests/models/broken/test_modeling_broken.py"
    assert "Traceback" in raised.value.details and "import no_such_dependency" in raised.value.details
    source.build("BertModel", generate=False)  # the other modules still build


def test_a_broken_shared_helper_keeps_every_cell_and_names_the_file_that_raised():
    """The issue's done-when: every cell is listed (generate included), the cause names the shared helper."""
    source = get_source(f"transformers-tests:{BROKEN}")
    infos = {i.model_class: i for i in source.classes()}
    assert list(infos) == [
        "BertModel",
        "BertForSequenceClassification",
        "LlamaModel",
        "LlamaForCausalLM",
        "ViTModel",
        "ViTForImageClassification",
    ]
    # LlamaModelTest mixes in ExportGenerateTesterMixin: its causal LM keeps its 16 generate cells.
    assert {n for n, i in infos.items() if i.generative} == {"LlamaForCausalLM"}
    assert len(list(cells_for("LlamaForCausalLM", generative=True))) == 24
    # Families from what the testers feed, not the class name: ViT is vision.
    assert infos["ViTModel"].family == "vision" and infos["LlamaModel"].family == "decoder"
    problems = []
    for name in ("BertModel", "LlamaForCausalLM", "ViTModel"):
        with pytest.raises(SetupProblem) as raised:
            source.target(name, generate=False)
        problems.append(raised.value)
    assert {p.origin for p in problems} == {"tests/generation/test_utils.py"}
    assert [p.module for p in problems] == [
        "tests/models/bert/test_modeling_bert.py",
        "tests/models/llama/test_modeling_llama.py",
        "tests/models/vit/test_modeling_vit.py",
    ]
    assert str(problems[0]).startswith("ImportError: cannot import name 'CandidateGeneratorThatDoesNotExist'")
    assert "tests/generation/test_utils.py raised it while importing tests/models/bert/test_modeling_bert.py" in str(
        problems[0]
    )
    assert 'generation/test_utils.py", line 7' in problems[0].details  # the original traceback
    with pytest.raises(SetupProblem):  # the generate path of the same class: the same cause
        source.build("LlamaForCausalLM", generate=True)


def test_only_the_needed_test_module_is_imported(tmp_path):
    root = _checkout(
        tmp_path,
        "tripwire",
        """
        import unittest
        raise RuntimeError("this module must not be imported for a run of other classes")
        class TripwireModelTest(unittest.TestCase):
            all_model_classes = (TripwireModel,)
    """,
    )
    source = get_source(f"transformers-tests:{root}")
    assert "TripwireModel" in {i.model_class for i in source.classes()}  # listed from the text
    source.build("BertModel", generate=False)
    assert not any("tripwire" in name for name in source._modules)
    assert "tests.models.bert.test_modeling_bert" in source._modules
    assert "tests.models.llama.test_modeling_llama" not in source._modules


def test_a_class_under_several_test_classes_is_served_by_the_one_that_runs_its_path(tmp_path):
    """Upstream runs each test class's own tests; a class listed twice is not lost to the first listing."""
    root = _checkout(
        tmp_path,
        "llama2",
        """
        import unittest
        from transformers import LlamaForCausalLM
        from ...generation.test_utils import GenerationTesterMixin
        from ...test_export_common import ExportGenerateTesterMixin
        from ...test_modeling_common import ModelTesterMixin
        from ..llama.test_modeling_llama import LlamaModelTester
        class LlamaForwardOnlyTest(ModelTesterMixin, GenerationTesterMixin, unittest.TestCase):
            all_model_classes = (LlamaForCausalLM,)
            def setUp(self):
                self.model_tester = LlamaModelTester(self, seq_length=5)
        class LlamaGenerateTest(ModelTesterMixin, GenerationTesterMixin, ExportGenerateTesterMixin, unittest.TestCase):
            all_model_classes = (LlamaForCausalLM,)
            def setUp(self):
                self.model_tester = LlamaModelTester(self, seq_length=4)
    """,
    )
    # Sorted first, so its forward-only test class is the class's first listing.
    (root / "tests/models/llama2").rename(root / "tests/models/aaa_llama2")
    source = get_source(f"transformers-tests:{root}")
    assert {i.model_class: i.generative for i in source.classes()}["LlamaForCausalLM"] is True
    assert source.build("LlamaForCausalLM", generate=False).inputs["input_ids"].shape == (2, 5)
    assert source.build("LlamaForCausalLM", generate=True).inputs["input_ids"].shape == (2, 4)


def test_the_checkout_is_checked_against_the_importable_transformers(tmp_path, caplog):
    import transformers

    root = _checkout(tmp_path, "x", "")
    (root / "src" / "transformers").mkdir(parents=True)
    (root / "src" / "transformers" / "__init__.py").write_text('__version__ = "9.9.9.dev0"\n')
    with caplog.at_level("INFO"):
        check = get_source(f"transformers-tests:{root}").check()
    assert (check.checkout_version, check.installed_version) == ("9.9.9.dev0", transformers.__version__)
    assert check.from_checkout is False
    assert "not the checkout's source, a different version" in check.describe()
    assert "holds transformers 9.9.9.dev0" in caplog.text


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
    source = get_source(f"transformers-tests:{root}")
    assert source.target("GPT2Model", generate=False).exportable is False  # read before anything is built
    built = source.build("GPT2Model", generate=False)
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


@pytest.mark.export
def test_a_generate_cell_runs_through_the_checkout_tester(source):
    """Gates from `target`, inputs from the tester, capture and a real torch.export: a values pass."""
    from bot.cells import Cell
    from bot.outcomes import Status
    from bot.run.execute import execute_cell
    from bot.skiplist.model import Skiplist, Skiplists

    empty = Skiplists(Skiplist("export_skips.toml", {}), Skiplist("onnx_disable_optimize.toml", {}))
    run = execute_cell(Cell("LlamaForCausalLM", "dynamo", "static", "generate", "dynamic"), source, empty)
    assert (run.status, run.compared, run.message) == (Status.PASSED, "values", "")
    assert [c.name for c in run.components] == ["prefill", "decode"] and "capture" in run.timings
