"""Hand overrides of the zoo's generic build, as plain data: each corrects one thing the generic path gets wrong.

An override applies to a model class, or to every class of a model type (the config's
`model_type`); a class's own override wins. Each carries a one-line reason. Importable without
torch or transformers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Input kinds the builder knows (bot/models/sources/zoo/build.py `_batch`); an override may force one.
INPUT_KINDS = (
    "text",
    "multiple-choice",
    "seq2seq",
    "text-layout",
    "text-image",
    "vlm",
    "image",
    "grid-vision",
    "video",
    "waveform",
    "features",
    "features-seq2seq",
)


@dataclass(frozen=True)
class Override:
    """Config keyword arguments merged over the generic tiny ones, and optionally the input kind."""

    reason: str
    config: Mapping[str, Any] = field(default_factory=dict)
    inputs: str | None = None  # one of INPUT_KINDS
    extra_inputs: Mapping[str, Any] = field(default_factory=dict)


# Keyed by model type (config model_type) or by class name.
OVERRIDES: dict[str, Override] = {
    "llama": Override(
        "one layer: ExecuTorch's XNNPACK lowering time grows with the graph, and Llama generate is the smoke "
        "preset's slowest cell (87 s → 48 s); the cache and decode paths are the same per layer",
        config={"num_hidden_layers": 1, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2},
    ),
    "gpt2": Override(
        "GPT-2's special tokens (50256) all map to the last id, as upstream's tester has them",
        config={"bos_token_id": 98, "eos_token_id": 98, "pad_token_id": 98},
    ),
    "clip": Override(
        "eos_token_id 2 keeps CLIP's pooling on the argmax of input_ids (its legacy rule), as upstream's tester",
        config={"text_config": {"eos_token_id": 2, "bos_token_id": 0, "pad_token_id": 1}},
    ),
    "xmod": Override(
        "X-MOD routes through a language adapter: without a default language its forward refuses to run",
        config={"default_language": "en_XX"},
    ),
    "bamba": Override(
        "the default config has no attention layer at all (attn_layer_indices None): one of the two is attention",
        config={"attn_layer_indices": [1]},
    ),
    "jamba": Override(
        "attention every 8th layer from the 4th never falls in two layers: every 2nd from the 1st, experts too",
        config={"attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2, "expert_layer_offset": 1},
    ),
    "granitemoehybrid": Override(
        "the default config is all linear attention, and its cache then has no length to report: one full layer",
        config={"layer_types": ["linear_attention", "full_attention"]},
    ),
    "codegen": Override(
        "CodeGen splits its heads over 4 model-parallel groups: 4 heads of 8, rotary over the whole head",
        config={"n_head": 4, "rotary_dim": 8},
    ),
    "clip_text_model": Override(
        "eos_token_id 2 keeps CLIP's pooling on the argmax of input_ids (its legacy rule), as upstream's tester",
        config={"eos_token_id": 2, "bos_token_id": 0, "pad_token_id": 1},
    ),
}


def override_for(model_class: str, model_type: str | None) -> Override | None:
    return OVERRIDES.get(model_class) or (OVERRIDES.get(model_type) if model_type else None)
