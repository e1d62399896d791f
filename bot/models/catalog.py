"""The model-class catalogue: every model class of the installed Transformers the zoo can size, read without torch.

Selection (which classes the zoo can build, which generate) and the runner's zoo source both
read it, so neither reaches into the other. The data is `bot/models/catalog.json`, written by
`export-bot zoo catalog` from Transformers' auto mappings and its modeling modules (and the last
`export-bot zoo coverage` result, which says which classes the zoo cannot build and why).
Loading it is a JSON read.

Most entries are auto-mapped classes. A model class no auto mapping lists (`DPRContextEncoder`,
`DPRReader`) is catalogued too, with no tasks, under the model type of the config class its
modeling module declares (`config: DPRConfig` → `dpr`): the zoo sizes every class from its
config class, mapped or not, and selection selects every model class a modeling module exports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("catalog.json")

FAMILIES = ("text-encoder", "decoder", "encoder-decoder", "vision", "audio", "multimodal", "other")

# The presets are hand-picked: the main job's default (forward BERT and ViT, generate Llama:
# all four backends in under 5 minutes) and one or two classes per family for shared-code PRs.
PRESETS: dict[str, tuple[str, ...]] = {
    "smoke": ("BertModel", "LlamaForCausalLM", "ViTModel"),
    "core": (
        "BertModel",
        "BertForSequenceClassification",
        "GPT2LMHeadModel",
        "LlamaForCausalLM",
        "T5ForConditionalGeneration",
        "ViTModel",
        "ResNetModel",
        "Wav2Vec2Model",
        "WhisperForConditionalGeneration",
        "CLIPModel",
        "LlavaForConditionalGeneration",
    ),
}

# Auto-mapping name (without MODEL_FOR_ / _MAPPING_NAMES) → the family its classes belong to.
# Tasks not listed (the base model, classification heads, masked LM, ...) take their model type's family.
_TASK_FAMILY = {
    **dict.fromkeys(
        (
            "IMAGE_TEXT_TO_TEXT",
            "MULTIMODAL_LM",
            "VISUAL_QUESTION_ANSWERING",
            "DOCUMENT_QUESTION_ANSWERING",
            "ZERO_SHOT_IMAGE_CLASSIFICATION",
            "ZERO_SHOT_OBJECT_DETECTION",
            "RETRIEVAL",
        ),
        "multimodal",
    ),
    **dict.fromkeys(
        (
            "SPEECH_SEQ_2_SEQ",
            "CTC",
            "AUDIO_CLASSIFICATION",
            "AUDIO_FRAME_CLASSIFICATION",
            "AUDIO_XVECTOR",
            "TEXT_TO_WAVEFORM",
            "TEXT_TO_SPECTROGRAM",
            "RNNT",
            "TDT",
        ),
        "audio",
    ),
    **dict.fromkeys(
        (
            "IMAGE",
            "MASKED_IMAGE_MODELING",
            "CAUSAL_IMAGE_MODELING",
            "IMAGE_CLASSIFICATION",
            "IMAGE_SEGMENTATION",
            "SEMANTIC_SEGMENTATION",
            "INSTANCE_SEGMENTATION",
            "UNIVERSAL_SEGMENTATION",
            "VIDEO_CLASSIFICATION",
            "OBJECT_DETECTION",
            "DEPTH_ESTIMATION",
            "BACKBONE",
            "MASK_GENERATION",
            "KEYPOINT_DETECTION",
            "KEYPOINT_MATCHING",
            "IMAGE_TO_IMAGE",
            "IMAGE_MATTING",
            "NORMAL_ESTIMATION",
            "POINTMAP_ESTIMATION",
            "POSE_ESTIMATION",
            "TEXT_RECOGNITION",
            "TABLE_RECOGNITION",
        ),
        "vision",
    ),
    **dict.fromkeys(
        ("TIME_SERIES_CLASSIFICATION", "TIME_SERIES_REGRESSION", "TIME_SERIES_PREDICTION", "DECISION"), "other"
    ),
    "SEQ_TO_SEQ_CAUSAL_LM": "encoder-decoder",
    "CAUSAL_LM": "decoder",
}
# A model type's family is its most specific task's.
_PRIORITY = ("multimodal", "audio", "vision", "other", "encoder-decoder")
# Heads that generate text: upstream's tests list these in `all_generative_model_classes`.
GENERATIVE_TASKS = frozenset({"CAUSAL_LM", "SEQ_TO_SEQ_CAUSAL_LM", "SPEECH_SEQ_2_SEQ", "IMAGE_TEXT_TO_TEXT"})
GENERATIVE_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")


@dataclass(frozen=True)
class CatalogEntry:
    """One model class (auto-mapped, or exported by a modeling module): what the zoo knows about it without building it."""

    model_class: str
    model_type: str  # the config's model_type (the auto mappings' key)
    family: str  # one of FAMILIES
    generative: bool
    tasks: tuple[str, ...]  # auto mappings that list it (BASE, CAUSAL_LM, ...); none for an unmapped class
    # Why the zoo cannot build it (from the last coverage run), or None: the zoo builds it.
    not_buildable: str | None = None

    @property
    def buildable(self) -> bool:
        return self.not_buildable is None


@dataclass(frozen=True)
class Catalogue:
    entries: Mapping[str, CatalogEntry]
    transformers_version: str

    def buildable(self) -> tuple[str, ...]:
        return tuple(name for name, entry in self.entries.items() if entry.buildable)

    def get(self, model_class: str) -> CatalogEntry | None:
        return self.entries.get(model_class)


def task_of(mapping_name: str) -> str:
    """`MODEL_FOR_CAUSAL_LM_MAPPING_NAMES` → `CAUSAL_LM`; `MODEL_MAPPING_NAMES` → `BASE`."""
    core = mapping_name.removesuffix("_MAPPING_NAMES").removeprefix("MODEL").removeprefix("_FOR_").strip("_")
    return core or "BASE"


def mapped_names(mappings: Mapping[str, Mapping[str, object]]) -> Iterator[tuple[str, str, str]]:
    """(mapping name, model type, class name) for each class a `MODEL_*_MAPPING_NAMES` dict lists (one or several a type)."""
    for mapping_name, mapping in mappings.items():
        for mtype, names in mapping.items():
            for name in names if isinstance(names, (list, tuple)) else (names,):
                yield mapping_name, mtype, name


def entries_from_mappings(
    mappings: Mapping[str, Mapping[str, object]],
    home: Mapping[str, str] | None = None,
    unmapped: Mapping[str, str] | None = None,
) -> dict[str, CatalogEntry]:
    """Entries from Transformers' `MODEL_*_MAPPING_NAMES` dicts (model type → class name or names).

    A class several model types map to (`LlamaForCausalLM` serves `internlm3` too) belongs to
    the type named like the folder of its modeling module (`home`: class → folder), else the first.
    `unmapped` (class → model type, see `unmapped_types`) adds the model classes no mapping
    lists, with no tasks: their family is their model type's, their generative flag their name's.
    """
    home = home or {}
    tasks: dict[str, set[str]] = {}
    model_type: dict[str, str] = {}
    for mapping_name, mtype, name in mapped_names(mappings):
        tasks.setdefault(name, set()).add(task_of(mapping_name))
        if name not in model_type or mtype == home.get(name):
            model_type[name] = mtype
    for name, mtype in (unmapped or {}).items():
        if name not in tasks:
            tasks[name], model_type[name] = set(), mtype
    type_tasks: dict[str, set[str]] = {}
    for name, class_tasks in tasks.items():
        type_tasks.setdefault(model_type[name], set()).update(class_tasks)
    entries = {}
    for name in sorted(tasks):
        class_tasks = tasks[name]
        family = (
            _family(class_tasks)
            or _tower_family(name, model_type[name])
            or _family(type_tasks[model_type[name]])
            or _text_family(type_tasks[model_type[name]])
        )
        generative = bool(class_tasks & GENERATIVE_TASKS) or name.endswith(GENERATIVE_SUFFIXES)
        entries[name] = CatalogEntry(name, model_type[name], family, generative, tuple(sorted(class_tasks)))
    return entries


def unmapped_types(
    classes_by_type: Mapping[str, Iterable[str]],
    configs: Mapping[str, str],
    config_types: Mapping[str, str],
    mapped: Iterable[str],
) -> dict[str, str]:
    """The model classes no auto mapping lists → the model type of the config class each declares.

    `config_types` is Transformers' `CONFIG_MAPPING_NAMES` (model type → config class name). A
    config class several types share (`GPT2Config`: `gpt2`, `gpt-sw3`) is the type named like the
    class's folder, else the first. A class whose config no type names (Bark's sub-model configs)
    is left out: the zoo could not tell what it is.
    """
    types: dict[str, list[str]] = {}
    for mtype, config in config_types.items():
        types.setdefault(config, []).append(mtype)
    mapped = set(mapped)
    found = {}
    for folder, classes in classes_by_type.items():
        for name in classes:
            candidates = types.get(configs.get(name, ""), [])
            if name not in mapped and candidates:
                found[name] = folder if folder in candidates else candidates[0]
    return found


def _family(tasks: set[str]) -> str | None:
    """The most specific non-text family among `tasks` (multimodal, audio, vision, other, encoder-decoder)."""
    found = {_TASK_FAMILY[t] for t in tasks if t in _TASK_FAMILY} - {"decoder"}
    return next((f for f in _PRIORITY if f in found), None)


def _tower_family(model_class: str, model_type: str) -> str | None:
    """A composite model's vision or audio tower, mapped on its own (`glm4v_vision`, `Gemma4AudioModel`)."""
    if "Vision" in model_class or model_type.endswith(("_vision", "_vision_model")):
        return "vision"
    if "Audio" in model_class or model_type.endswith(("_audio", "_audio_encoder")):
        return "audio"
    return None


def _text_family(tasks: set[str]) -> str:
    # BERT has a causal-LM head too, but its masked LM makes it an encoder.
    if tasks & {"MASKED_LM", "MULTIPLE_CHOICE", "NEXT_SENTENCE_PREDICTION"} or "CAUSAL_LM" not in tasks:
        return "text-encoder"
    return "decoder"


def with_coverage(entries: Mapping[str, CatalogEntry], not_buildable: Mapping[str, str]) -> dict[str, CatalogEntry]:
    return {
        name: CatalogEntry(e.model_class, e.model_type, e.family, e.generative, e.tasks, not_buildable.get(name))
        for name, e in entries.items()
    }


def dump(catalogue: Catalogue) -> str:
    rows = {
        name: {
            "model_type": e.model_type,
            "family": e.family,
            "generative": e.generative,
            "tasks": list(e.tasks),
            **({"not_buildable": e.not_buildable} if e.not_buildable else {}),
        }
        for name, e in sorted(catalogue.entries.items())
    }
    return (
        json.dumps({"transformers": catalogue.transformers_version, "classes": rows}, indent=1, sort_keys=True) + "\n"
    )


def parse(text: str) -> Catalogue:
    data = json.loads(text)
    entries = {
        name: CatalogEntry(
            name,
            row["model_type"],
            row["family"],
            bool(row["generative"]),
            tuple(row["tasks"]),
            row.get("not_buildable"),
        )
        for name, row in data["classes"].items()
    }
    return Catalogue(entries, data["transformers"])


@lru_cache(maxsize=1)
def load(path: Path = DATA) -> Catalogue:
    """The shipped catalogue (a JSON read: no torch, no transformers)."""
    return parse(path.read_text(encoding="utf-8"))


def generate() -> Catalogue:
    """A catalogue of the installed Transformers' model classes (imports transformers, not torch models).

    The auto mappings name most classes and their tasks; the modeling modules (read as text,
    bot/models/index.py) add the model classes no mapping lists, under their config's model type.
    """
    import transformers
    from transformers.models.auto import modeling_auto
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    from bot.models.index import build_index, installed_models_dir

    mappings = {k: v for k, v in vars(modeling_auto).items() if k.startswith("MODEL") and k.endswith("_MAPPING_NAMES")}
    index = build_index(installed_models_dir(), with_configs=True)
    home = {c: folder for folder, classes in index.classes_by_type.items() for c in classes}
    mapped = {name for _, _, name in mapped_names(mappings)}
    unmapped = unmapped_types(index.classes_by_type, index.configs, CONFIG_MAPPING_NAMES, mapped)
    return Catalogue(entries_from_mappings(mappings, home, unmapped), transformers.__version__)


def families(entries: Iterable[CatalogEntry]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.family] = counts.get(e.family, 0) + 1
    return counts
