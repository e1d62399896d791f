"""The pure parts of selection: path rules, diff parsing, import screens, skiplist entry diffs, the catalog."""

from __future__ import annotations

import pytest

from bot.models.index import class_bases, class_bodies, config_classes
from bot.select.catalog import Catalog, load_catalog
from bot.select.changes import Change, parse_name_status
from bot.select.rules import classify, match_path, model_type_of
from bot.select.skiplist_changes import EntryChange, covered_cells, entry_changes
from bot.select.tree import ModelTree, exported_classes, runtime_imports
from bot.settings import Settings

M = "src/transformers/models"


@pytest.mark.parametrize(
    "path, kind",
    [
        (f"{M}/llama/modeling_llama.py", "model"),
        (f"{M}/llama/modular_llama.py", "model"),
        (f"{M}/llama/configuration_llama.py", "model"),
        (f"{M}/llama/tokenization_llama.py", "other"),
        (f"{M}/llama/__init__.py", "other"),
        (f"{M}/llama/sub/modeling_llama.py", "other"),
        ("src/transformers/exporters/onnx/exporter.py", "shared"),
        ("src/transformers/generation/utils.py", "shared"),
        ("src/transformers/modeling_utils.py", "shared"),
        ("src/transformers/integrations/sdpa_attention.py", "shared"),
        ("src/transformers/integrations/flash_attention.py", "other"),
        ("skiplists/export_skips.toml", "skiplist"),
        ("tests/skiplists/export_skips.toml", "other"),
        ("docs/source/en/model_doc/llama.md", "other"),
    ],
)
def test_classify(path, kind):
    assert classify(path, Settings()) == kind


def test_globs_keep_single_star_inside_a_folder():
    assert match_path("a/b.toml", ["a/*.toml"]) and not match_path("a/x/b.toml", ["a/*.toml"])
    assert match_path("a/x/y/b.toml", ["a/**"]) and match_path("b.toml", ["**/b.toml"])
    assert match_path("tests/skiplists/s.toml", ["**/skiplists/*.toml"])
    assert model_type_of(f"{M}/bert/modeling_bert.py") == "bert" and model_type_of("setup.py") is None


def test_name_status_with_renames():
    out = "M\0a.py\0R087\0old/x.py\0new/x.py\0D\0gone.py\0"
    assert parse_name_status(out) == [Change("M", "a.py"), Change("R", "new/x.py", "old/x.py"), Change("D", "gone.py")]
    assert Change("R", "new", "old").paths == ("old", "new")


def test_runtime_imports_count_module_and_function_level_but_not_type_checking():
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..auto import AutoModel\n"
        "from ...modeling_utils import PreTrainedModel\n"
        "from .configuration_x import XConfig\n"
        "from ..bert.modeling_bert import BertModel\n"
        "import transformers.models.t5.modeling_t5\n"
        "if TYPE_CHECKING:\n    from ..llama.modeling_llama import LlamaModel\n"
        "def f():\n    from transformers.models.clip import CLIPModel\n"
    )
    assert runtime_imports(source, "x") == {"bert", "t5", "clip"}
    assert runtime_imports("from ..x.modeling_x import A\n", "x") == frozenset()


def test_exported_classes_are_pretrained_model_subclasses():
    source = (
        "from ...modeling_utils import PreTrainedModel\n"
        "from ..llama.modeling_llama import LlamaModel\n"
        "class XPreTrainedModel(PreTrainedModel): ...\n"
        "class XLayer(nn.Module): ...\n"
        "class XModel(XPreTrainedModel): ...\n"
        "class XForCausalLM(\n    GenerationMixin,\n    XPreTrainedModel,\n): ...\n"
        "class XDerived(LlamaModel): ...\n"
        "def helper(): ...\n"
        '__all__ = ["XModel", "XPreTrainedModel", "XForCausalLM", "XLayer", "helper", "XDerived", "XReexported"]\n'
    )
    # Only PreTrainedModel subclasses; a class from another type resolves through that type's classes.
    assert exported_classes(source) == ("XModel", "XForCausalLM")
    elsewhere = {"LlamaModel": ("LlamaPreTrainedModel",), "XReexported": ("Blip2PreTrainedModel",)}
    assert exported_classes(source, elsewhere) == ("XModel", "XForCausalLM", "XDerived", "XReexported")


def test_marked_bases_with_hollow_bodies_are_not_model_classes():
    # DPR's `DPRPretrainedReader`: `Pretrained` in the name (upstream's check_repo skips those), a
    # docstring and class attributes only, and an abstract base: the same empty model as its base.
    source = (
        "class XPreTrainedModel(PreTrainedModel):\n    config: XConfig\n"
        "class XPretrainedReader(XPreTrainedModel):\n"
        '    """An abstract class to handle weights initialization."""\n'
        '    base_model_prefix = "reader"\n'
        "    def _init_weights(self, module): ...\n"
        "def helper():\n    def forward(x): ...\n"
        "class XReader(XPretrainedReader):\n    def __init__(self, config): ...\n    def forward(self, x): ...\n"
        # marked, but builds and runs something of its own: a real tower (Qwen2.5-VL's vision model)
        "class XVisionTransformerPretrainedModel(XPreTrainedModel):\n    def forward(self, x): ...\n"
        # marked and hollow, but derived from a real model: it is that model under another name
        "class XPretrainedAlias(XReader):\n    pass\n"
        '__all__ = ["XPreTrainedModel", "XPretrainedReader", "XReader", "XVisionTransformerPretrainedModel", '
        '"XPretrainedAlias"]\n'
    )
    assert exported_classes(source) == ("XReader", "XVisionTransformerPretrainedModel", "XPretrainedAlias")
    bodies = class_bodies(source)
    assert (
        not bodies["XPretrainedReader"].runs and bodies["XReader"].runs
    )  # helper's nested forward is no method of XPretrainedReader
    assert config_classes(["XReader", "XPretrainedAlias"], bodies, class_bases(source)[0]) == {
        "XReader": "XConfig",
        "XPretrainedAlias": "XConfig",
    }


def test_closures_are_transitive_and_name_the_link():
    tree = ModelTree(
        {}, imports={"b": frozenset({"a"}), "c": frozenset({"b"})}, modular_parents={"d": frozenset({"a"})}
    )
    assert tree.dependents({"a"}) == {"b": "a", "c": "b"}
    assert tree.modular_descendants({"a"}) == {"d": "a"}
    assert tree.dependents({"c"}) == {}


def test_entry_changes_ignore_reason_edits_and_mark_moves():
    base = '[all]\nA = "x"\nB = "y"\n\n["onnx.dynamic"]\nC = "z"\n'
    head = '[all]\nA = "reworded"\n\n["onnx.dynamic"]\nC = "z"\nB = "y"\n'
    assert entry_changes("s.toml", base, head) == [
        EntryChange("s.toml", "onnx.dynamic", "B", "added", moved=True),
        EntryChange("s.toml", "all", "B", "removed", moved=True),
    ]
    assert entry_changes("s.toml", None, '[dynamic]\nA = "x"\n') == [EntryChange("s.toml", "dynamic", "A", "added")]


def test_covered_cells_follow_the_walk():
    never = lambda _: False  # noqa: E731
    ids = lambda e: sorted(c.id for c in covered_cells(e, never))  # noqa: E731
    assert ids(EntryChange("export_skips.toml", "onnx.dynamic", "BertModel", "added")) == [
        "BertModel::test_onnx_export_dynamic"
    ]
    # Forward dynamo compares without a backend: `exactness` reaches it, `dynamo.exactness` does not.
    assert "BertModel::test_torch_export_static" in ids(
        EntryChange("export_skips.toml", "exactness", "BertModel", "added")
    )
    assert ids(EntryChange("export_skips.toml", "dynamo.exactness", "BertModel", "added")) == []
    assert ids(EntryChange("export_skips.toml", "xnnpack", "BertModel", "added")) == [
        "BertModel::test_executorch_export_dynamic_xnnpack",
        "BertModel::test_executorch_export_static_xnnpack",
    ]
    assert ids(EntryChange("onnx_disable_optimize.toml", "all", "BertModel", "added")) == [
        "BertModel::test_onnx_export_dynamic",
        "BertModel::test_onnx_export_static",
    ]


def test_catalog_core_from_settings_or_the_zoo_preset():
    from bot.models import catalog

    zoo = load_catalog(Settings())
    assert zoo.core == catalog.PRESETS["core"] and zoo.buildable == frozenset(catalog.load().buildable())
    assert load_catalog(Settings(core=("BertModel",))).core == ("BertModel",)
    assert load_catalog(Settings(source="transformers-tests:/x")).buildable is None
    guess = Catalog({}, None, ())
    assert guess.is_generative("FooForCausalLM") and guess.is_generative("T5ForConditionalGeneration")
    assert not guess.is_generative("FooModel") and guess.unbuildable(["FooModel"]) == ()
