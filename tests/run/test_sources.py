"""The model-source contract and the zoo: every recipe builds tiny, deterministic, and runs eagerly."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.run.sources import FAMILIES, BuildError, NotBuildable, SourceError, get_source
from bot.run.sources.zoo.recipes import INPUT_KINDS, RECIPES

torch = pytest.importorskip("torch")

GENERATIVE = [name for name, recipe in RECIPES.items() if recipe.generative]


@pytest.fixture(scope="module")
def zoo():
    return get_source("zoo")


def test_recipes_and_listing_do_not_import_torch():
    # Selection reads recipes and presets in light jobs: neither may pull in torch or transformers.
    code = (
        "import sys; from bot.run.sources import get_source; s = get_source('zoo'); "
        "s.classes(); s.presets(); import bot.run.sources.zoo.recipes; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_coverage_spans_the_families():
    assert len(RECIPES) >= 30
    assert len({r.model_type for r in RECIPES.values()}) >= 12
    assert {r.family for r in RECIPES.values()} == set(FAMILIES)
    assert {r.inputs for r in RECIPES.values()} <= set(INPUT_KINDS)
    for family in ("decoder", "encoder-decoder", "multimodal"):
        assert any(r.generative and r.family == family for r in RECIPES.values()), family


def test_presets(zoo):
    presets = zoo.presets()
    assert set(presets) == {"smoke", "core", "all"}
    assert presets["all"] == tuple(RECIPES)
    for name, members in presets.items():
        assert set(members) <= set(RECIPES), name
        assert len(set(members)) == len(members), name
    smoke = [RECIPES[n] for n in presets["smoke"]]
    assert len(smoke) == 3 and any(r.generative for r in smoke) and any(not r.generative for r in smoke)
    assert {RECIPES[n].family for n in presets["core"]} == set(FAMILIES)


def test_classes_mirror_the_recipes(zoo):
    infos = {info.model_class: info for info in zoo.classes()}
    assert list(infos) == list(RECIPES)
    assert infos["LlamaForCausalLM"].generative and infos["LlamaForCausalLM"].family == "decoder"
    assert not infos["BertModel"].generative and infos["BertModel"].model_type == "bert"


@pytest.mark.parametrize("name", list(RECIPES))
def test_recipe_builds_and_runs_eager_forward(zoo, name):
    built = zoo.build(name, generate=False)
    assert built.model_class.__name__ == name
    assert built.exportable
    model = built.model_class(built.config).eval()
    with torch.no_grad():
        outputs = model(**built.inputs)
    tensors = [v for v in outputs.values() if torch.is_tensor(v)]
    assert tensors
    assert all(torch.isfinite(t).all() for t in tensors if t.is_floating_point())
    assert all(t.shape[0] == 2 for t in built.inputs.values())  # batch 2 everywhere


@pytest.mark.parametrize("name", GENERATIVE)
def test_generative_recipe_generates(zoo, name):
    built = zoo.build(name, generate=True)
    model = built.model_class(built.config).eval()
    with torch.no_grad():
        sequences = model.generate(**built.inputs, max_new_tokens=2, do_sample=False)
    assert sequences.shape[0] == 2
    # eos cleared as upstream's generation tester does, so decode always runs.
    assert built.config.get_text_config(decoder=True).eos_token_id is None


def test_builds_are_fresh_and_deterministic(zoo):
    first, second = zoo.build("BertModel", generate=False), zoo.build("BertModel", generate=False)
    assert first.config is not second.config
    first.config.hidden_size = 7  # the runner mutates its config; the next build must not see it
    assert zoo.build("BertModel", generate=False).config.hidden_size == 32
    for key in first.inputs:
        assert torch.equal(first.inputs[key], second.inputs[key])


@pytest.mark.parametrize(
    "name, generate, padded",
    [
        ("BertModel", False, (1, -1)),  # right padding for a forward pass
        ("LlamaForCausalLM", False, (1, -1)),
        ("LlamaForCausalLM", True, (1, 0)),  # left padding for decoder-only generation
        ("T5ForConditionalGeneration", True, (1, -1)),
    ],
)
def test_attention_mask_masks_a_few_positions(zoo, name, generate, padded):
    built = zoo.build(name, generate=generate)
    mask = built.inputs["attention_mask"]
    assert mask[0].all() and mask[padded] == 0
    assert 0 < int((mask == 0).sum()) < mask.numel() // 2


def test_vlm_generate_keeps_image_tokens_whole(zoo):
    built = zoo.build("LlavaForConditionalGeneration", generate=True)
    image_token = built.config.image_token_id
    per_row = (built.inputs["input_ids"] == image_token).sum(dim=1)
    assert per_row.tolist() == [16, 16]
    assert built.inputs["attention_mask"][1, :2].tolist() == [0, 0]


def test_a_class_without_a_recipe_is_not_buildable(zoo):
    with pytest.raises(NotBuildable, match="no recipe for NoSuchModel"):
        zoo.build("NoSuchModel", generate=False)


def test_generate_of_a_forward_only_class_is_a_build_error(zoo):
    with pytest.raises(BuildError, match="not generative"):
        zoo.build("BertModel", generate=True)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("bogus", "unknown model source"),
        ("transformers-tests:", "give the Transformers checkout"),
        ("transformers-tests:/no/such/dir", "is not a directory"),
    ],
)
def test_bad_source_spec(spec, message):
    with pytest.raises(SourceError, match=message):
        get_source(spec)
