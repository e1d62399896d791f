"""The model-source contract and the zoo: any catalogued class builds tiny, deterministic, under the cap, and runs eagerly."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.models import catalog
from bot.models.sources import FAMILIES, BuildError, SourceError, get_source
from bot.models.sources.base import NotBuildable

torch = pytest.importorskip("torch")

# A few classes per input kind (the coverage figure over all of them comes from `export-bot zoo coverage`).
FORWARD = [
    "BertModel",  # text
    "BertForMultipleChoice",  # multiple choice
    "LlamaForCausalLM",
    "GemmaForCausalLM",
    "Qwen2MoeForCausalLM",  # experts
    "T5ForConditionalGeneration",  # seq2seq
    "BartForSequenceClassification",  # eos-pooled encoder-decoder head
    "ViTModel",  # image
    "ResNetModel",  # channel lists per stage
    "Wav2Vec2Model",  # waveform
    "WhisperForConditionalGeneration",  # spectrogram features
    "CLIPModel",  # text and image
    "LlavaForConditionalGeneration",  # image tokens in the text
    "DPRContextEncoder",  # in no auto mapping: catalogued under its config's model type
    "DPRReader",
]
GENERATIVE = [
    "LlamaForCausalLM",
    "T5ForConditionalGeneration",
    "WhisperForConditionalGeneration",
    "LlavaForConditionalGeneration",
]


@pytest.fixture(scope="module")
def zoo():
    return get_source("zoo")


def test_catalogue_and_listing_do_not_import_torch():
    # Selection reads the catalogue and presets in light jobs: neither may pull in torch or transformers.
    code = (
        "import sys; from bot.models.sources import get_source; s = get_source('zoo'); "
        "s.classes(); s.presets(); import bot.models.catalog, bot.select.catalog, bot.models.sources.zoo.recipes; "
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_catalogue_lists_the_installed_model_classes():
    shipped, fresh = catalog.load(), catalog.generate()
    assert shipped.transformers_version == fresh.transformers_version
    assert set(shipped.entries) == set(fresh.entries)  # else: run `export-bot zoo catalog`
    assert len(fresh.entries) >= 1500
    # Auto-mapped classes have tasks; a model class no mapping lists takes its config's model type.
    assert fresh.entries["DPRQuestionEncoder"].tasks == ("BASE",)
    reader = fresh.entries["DPRReader"]
    assert (reader.model_type, reader.family, reader.generative, reader.tasks) == ("dpr", "text-encoder", False, ())
    assert "DPRPretrainedReader" not in fresh.entries  # an abstract base is no model class
    assert {e.family for e in fresh.entries.values()} == set(FAMILIES)
    llama, bert = fresh.entries["LlamaForCausalLM"], fresh.entries["BertModel"]
    assert (llama.model_type, llama.family, llama.generative) == ("llama", "decoder", True)
    assert (bert.model_type, bert.family, bert.generative) == ("bert", "text-encoder", False)
    assert fresh.entries["WhisperForConditionalGeneration"].family == "audio"


def test_presets(zoo):
    presets = zoo.presets()
    assert set(presets) == {"smoke", "core", "all"}
    buildable = {info.model_class for info in zoo.classes()}
    assert set(presets["all"]) == buildable and len(buildable) >= 900
    for name, members in presets.items():
        assert set(members) <= buildable, name
        assert len(set(members)) == len(members), name
    infos = {info.model_class: info for info in zoo.classes()}
    smoke = [infos[n] for n in presets["smoke"]]
    assert len(smoke) == 3 and any(i.generative for i in smoke) and any(not i.generative for i in smoke)
    assert {infos[n].family for n in presets["core"]} == set(FAMILIES) - {"other"}


@pytest.mark.parametrize("name", FORWARD)
def test_builds_tiny_and_runs_eager_forward(zoo, name):
    from bot.models.sources.zoo.build import PARAMETER_CAP

    built = zoo.build(name, generate=False)
    assert built.model_class.__name__ == name
    model = built.model_class(built.config).eval()
    assert sum(p.numel() for p in model.parameters()) <= PARAMETER_CAP
    with torch.no_grad():
        outputs = model(**built.inputs)
    tensors = [v for v in outputs.values() if torch.is_tensor(v)]
    assert tensors
    assert all(torch.isfinite(t).all() for t in tensors if t.is_floating_point())
    assert all(t.shape[0] == 2 for t in built.inputs.values())  # batch 2 everywhere


@pytest.mark.parametrize("name", GENERATIVE)
def test_generative_class_generates(zoo, name):
    built = zoo.build(name, generate=True)
    model = built.model_class(built.config).eval()
    with torch.no_grad():
        sequences = model.generate(**built.inputs, max_new_tokens=2, do_sample=False)
    assert sequences.shape[0] == 2
    # eos cleared as upstream's generation tester does, so decode always runs.
    assert built.config.get_text_config(decoder=True).eos_token_id is None


_FINGERPRINT = (
    "import torch; from bot.models.sources import get_source; "
    "b = get_source('zoo').build('{name}', generate=False); m = b.model_class(b.config); "
    "print(sum(float(p.double().sum()) for p in m.parameters()), "
    "sum(float(v.double().sum()) for v in b.inputs.values()))"
)


@pytest.mark.parametrize("name", ["BertModel", "LlavaForConditionalGeneration"])
def test_weights_and_inputs_are_the_same_in_every_process(name):
    runs = {
        subprocess.run(
            [sys.executable, "-c", _FINGERPRINT.format(name=name)], capture_output=True, text=True, check=True
        )
        .stdout.split()[-2:]
        .__repr__()
        for _ in range(2)
    }
    assert len(runs) == 1


def test_builds_are_fresh(zoo):
    first, second = zoo.build("BertModel", generate=False), zoo.build("BertModel", generate=False)
    assert first.config is not second.config
    first.config.hidden_size = 7  # the runner mutates its config; the next build must not see it
    assert zoo.build("BertModel", generate=False).config.hidden_size == 32
    for key in first.inputs:
        assert torch.equal(first.inputs[key], second.inputs[key])


def test_special_token_ids_lie_inside_the_tiny_vocabulary(zoo):
    config = zoo.build("LlavaForConditionalGeneration", generate=False).config
    vocab = config.text_config.vocab_size
    assert 0 <= config.image_token_id < vocab
    built = zoo.build("GPT2LMHeadModel", generate=False)
    assert built.config.eos_token_id < built.config.vocab_size
    assert int(built.inputs["input_ids"].max()) < built.config.vocab_size


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
    assert per_row[0] == per_row[1] > 0
    assert built.inputs["attention_mask"][1, :2].tolist() == [0, 0]


def test_a_class_over_the_cap_is_not_buildable_and_says_why(monkeypatch, zoo):
    from bot.models.sources.zoo import build

    monkeypatch.setattr(build, "PARAMETER_CAP", 1000)
    with pytest.raises(NotBuildable, match=r"parameters at the zoo's smallest sizes \(cap 0M\): largest "):
        zoo.build("BertModel", generate=False)


def test_overrides_are_data_with_a_reason():
    from bot.models.sources.zoo.recipes import INPUT_KINDS, OVERRIDES

    for key, override in OVERRIDES.items():
        assert override.reason.strip() and "\n" not in override.reason, key
        assert override.inputs is None or override.inputs in INPUT_KINDS, key


def test_unknown_class_is_not_buildable(zoo):
    with pytest.raises(NotBuildable, match="NoSuchModel is not in any auto mapping"):
        zoo.build("NoSuchModel", generate=False)


def test_a_class_the_catalogue_lacks_builds_from_its_config_class(monkeypatch):
    from bot.models.sources.zoo import source

    monkeypatch.setattr(source, "_installed", lambda: {})
    bare = source.ZooSource(catalog.Catalogue({}, "x"))
    built = bare.build("DPRReader", generate=False)
    assert built.model_class.__name__ == "DPRReader" and built.config.model_type == "dpr"
    with pytest.raises(NotBuildable, match="DPRPretrainedReader is an abstract base: it defines no forward"):
        bare.build("DPRPretrainedReader", generate=False)
    with pytest.raises(NotBuildable, match="NoSuchModel is not in any auto mapping"):
        bare.build("NoSuchModel", generate=False)


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
