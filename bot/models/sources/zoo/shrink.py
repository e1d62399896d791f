"""Shrink any Transformers config class to a tiny one, by the names of its fields (imports transformers only).

A config is rebuilt from keyword arguments rather than mutated: fields derived in a config's
own `__post_init__` (`layer_types`, `head_dim`, sub-config defaults) then follow the new sizes.
Sub-configs of composite models are shrunk the same way and passed as dicts with their
`model_type`; special token ids are remapped into the tiny vocabulary through one table shared
by the whole config tree, so a composite model's `image_token_id` and its text model agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# The sizes of one "level": the first try, then a smaller one for classes over the budget.
# Hidden 32, 2 heads of 16, 2 layers and a vocabulary of 99 are upstream's tester sizes.


@dataclass(frozen=True)
class Level:
    width: int = 32
    heads: int = 2
    layers: int = 2
    vocab: int = 99
    positions: int = 64  # as upstream's testers; a static cache for generate is this long
    image: int = 32
    patch: int = 8
    experts: int = 4


LEVELS = (Level(), Level(width=16, layers=1, vocab=64, experts=2))

_LAYERS = re.compile(
    r"^(num_hidden_layers|num_layers|n_layers?|encoder_layers|decoder_layers|num_decoder_layers|"
    r"num_encoder_layers|.*_num_layers|num_.*_layers|.*_layers_num|depth|.*_depth|n_blocks|num_blocks)$"
)
_HEADS = re.compile(
    r"^(num_attention_heads|n_heads?|num_heads|.*_attention_heads|.*_num_heads|num_.*_heads|.*_n_heads)$"
)
_KV_HEADS = re.compile(r"^(num_key_value_heads|num_kv_heads|.*_key_value_heads|multi_query_group_num|n_kv_heads)$")
_HEAD_DIM = re.compile(
    r"^(head_dim|rotary_dim|rotary_emb_dim|.*_head_dim|d_kv|attention_head_size|kv_channels|dim_head|d_head|.*_head_size)$"
)
_VOCAB = re.compile(r"^(vocab_size|.*_vocab_size|n_vocab)$")
_POSITIONS = re.compile(
    r"^(max_position_embeddings|n_positions|n_ctx|max_.*_positions|max_.*position_embeddings|"
    r".*_max_position_embeddings|max_seq_len|max_sequence_length|seq_length|max_length)$"
)
_TOKEN_ID = re.compile(r"^(.*token_id|.*token_index|.*_token|.*_id|.*_idx)$")
_EXPERTS = re.compile(r"^(num_experts|num_local_experts|n_routed_experts|moe_num_experts|num_routed_experts)$")
_TOPK = re.compile(r"^(num_experts_per_tok|moe_topk|top_k|num_experts_per_token|moe_k|n_group|topk_group)$")
_SHARED_EXPERTS = re.compile(r"^(n_shared_experts|num_shared_experts|moe_num_shared_experts)$")
_IMAGE = re.compile(r"^(image_size|img_size|crop_size|max_image_size|pretrain_image_size)$")
_PATCH = re.compile(r"^(patch_size|patch_sizes)$")
# Widths: any size or dimension field. Checked after the specific names above.
_WIDTH = re.compile(
    r"^(hidden_size|d_model|n_embd|dim|embed_dim|hidden_dim|width|d_ff|d_inner|n_inner|.*_size|.*_dim|"
    r".*_dims|.*_channels|.*_units|.*_hidden|.*_rank|.*_width|ffn_dim|.*ffn_dim|.*intermediate.*|"
    r"projection_dim|.*_features|num_filters|mlp_dim|.*_embedding_dim|.*_embed_dim)$"
)
# Never width-shrunk although their names look like sizes: they are rates, counts or steps of the data.
_KEEP = re.compile(
    r"^(chunk_size_feed_forward|sampling_rate|sample_rate|.*sampling_rate|hop_length|num_labels|"
    r"num_channels|.*num_channels|in_channels|input_channels|window_size|.*window.*|.*stride.*|"
    r".*kernel.*|.*_ratio|.*_factor|.*_scale|scale|.*_eps|.*_epsilon|num_mel_bins|feature_size|"
    r"n_mels|.*_dropout|.*_prob|.*_theta|.*_base|.*_range|rope_.*|.*_threshold|.*_temperature|"
    r"seed|batch_size|.*_groups|num_.*groups|spatial_merge_size|merge_size|temporal_patch_size|"
    r"downsample_.*|.*_multiple_of|.*_padding.*|num_frames|.*_frames|frames_.*|.*_stride|"
    r"num_queries|num_classes|num_codebooks|codebook_size|.*num_buckets.*|relative_attention_max_distance|"
    r"output_stride|out_features|out_indices|stage_names|.*_layer|.*_layers_ids|num_channels_.*|"
    r".*feat_extract.*|.*conv_.*layers|max_2d_position_embeddings|.*_period|.*_offset)$"
)
# Image tokens per image: at most the tiny image's patch count ((32 / 8)² = 16).
_IMAGE_TOKENS = re.compile(r"^(mm_tokens_per_image|image_seq_length|num_image_tokens|image_tokens)$")


@dataclass
class _Tokens:
    """One remapping of special token ids for a whole config tree, and the ids it hands out."""

    vocab: int
    mapped: dict[int, int] = field(default_factory=dict)

    def remap(self, value: int) -> int:
        if 0 <= value < self.vocab:
            self.mapped.setdefault(value, value)
            return value
        if value not in self.mapped:
            taken = set(self.mapped.values())
            new = self.vocab - 1
            while new in taken:
                new -= 1
            self.mapped[value] = new
        return self.mapped[value]


def _scaled_list(values: list[int], ratio: float) -> list[int]:
    """Channel sizes per stage, all divided by one ratio per config: equal sizes stay equal, so a stage's
    output still feeds the next stage's input ([96, 192, 384, 768] → [8, 8, 16, 32])."""
    if ratio <= 1:
        return list(values)
    return [max(8, int(round(v / ratio / 8)) * 8) if v >= 8 else v for v in values]


_CHANNEL_LISTS = re.compile(
    r"^(in_channels|out_channels|hidden_sizes|embed_dims|conv_dim|tdnn_dim|.*_channels|.*_sizes)$"
)


def _list_ratio(values: Mapping[str, Any], level: Level) -> float:
    """One divisor for every channel list of a config: the largest entry of any of them over the tiny width."""
    tops = [
        max(v)
        for name, v in values.items()
        if isinstance(v, (list, tuple))
        and v
        and all(_is_int(x) for x in v)
        and (_CHANNEL_LISTS.match(name) or (_WIDTH.match(name) and not _KEEP.match(name)))
        and not _TOKEN_ID.match(name)
    ]
    return max(tops) / level.width if tops else 1.0


# Group counts (group norm, grouped convolutions) must divide the tiny channel counts, all multiples of 8.
_GROUPS = re.compile(r"^(num_groups|.*_num_groups|.*norm_groups|groups|.*_groups)$")
# Local attention windows longer than the tiny position limit pad inputs past it.
_WINDOW = re.compile(r"^(attention_window|local_attention|local_window_size)$")
# Positive counts capped at the level's size, checked in this order (the first pattern that matches wins).
_CAPS: tuple[tuple[re.Pattern[str], Callable[[Level], int]], ...] = (
    (_LAYERS, lambda level: level.layers),
    (_KV_HEADS, lambda level: 1),
    (_HEADS, lambda level: level.heads),
    (_HEAD_DIM, lambda level: level.width // level.heads),
    (_EXPERTS, lambda level: level.experts),
    (_TOPK, lambda level: 2),
    (_SHARED_EXPERTS, lambda level: 1),
    (_IMAGE_TOKENS, lambda level: (level.image // level.patch) ** 2),
    (_POSITIONS, lambda level: level.positions),
    (_IMAGE, lambda level: level.image),
    (_PATCH, lambda level: level.patch),
)


def _shrink_int(name: str, value: int, level: Level, original_layers: int | None) -> int | None:
    """The tiny value of one integer field, or None to leave it alone."""
    if _GROUPS.match(name) and "codevector" not in name:
        return min(value, 8) if value > 8 else None
    if _WINDOW.match(name):
        return min(value, 16) if value > 16 else None
    if _KEEP.match(name):
        return None
    for pattern, cap in _CAPS:
        if pattern.match(name):
            return min(value, cap(level)) if value > 0 else None
    if _WIDTH.match(name):
        return min(value, level.width) if value > level.width else None
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def config_kwargs(config: Any, level: Level, tokens: _Tokens) -> dict[str, Any]:
    """The keyword arguments that rebuild `config` tiny (sub-configs as dicts with their model_type)."""
    from transformers import PretrainedConfig

    values = dict(vars(config))
    shrinking = _shrinking(config, values, level, tokens)
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name.startswith("_") or name in _NEVER_PASS:
            continue
        if isinstance(value, PretrainedConfig):
            sub = config_kwargs(value, level, tokens)
            out[name] = {"model_type": value.model_type, **sub}
            continue
        new = _tiny_value(name, value, shrinking)
        if new is not _UNCHANGED:
            out[name] = new
    return out


@dataclass(frozen=True)
class _Shrinking:
    """What shrinking one config's fields needs to know about the whole config."""

    level: Level
    tokens: _Tokens
    config_type: type
    original_layers: int | None
    kept: tuple[int, ...]  # the original layers the tiny model keeps
    ratio: float  # the one divisor of every channel list
    mla: bool  # multi-head latent attention


# A field the tiny config leaves out, so it keeps its original value.
_UNCHANGED = object()


def _shrinking(config: Any, values: Mapping[str, Any], level: Level, tokens: _Tokens) -> _Shrinking:
    original_layers = next(
        (v for k, v in values.items() if k in ("num_hidden_layers", "num_layers", "n_layer") and _is_int(v)), None
    )
    new_layers = min(original_layers, level.layers) if original_layers else None
    return _Shrinking(
        level=level,
        tokens=tokens,
        config_type=type(config),
        original_layers=original_layers,
        kept=tuple(_kept_layers(values, original_layers, new_layers)),
        ratio=_list_ratio(values, level),
        # Multi-head latent attention (DeepSeek-V2/V3 and kin) expands keys to every head: no grouping.
        mla=_is_int(values.get("kv_lora_rank")),
    )


def _tiny_value(name: str, value: Any, shrinking: _Shrinking) -> Any:
    """The tiny value of one field, or `_UNCHANGED`."""
    if _is_int(value):
        return _tiny_int(name, value, shrinking)
    if isinstance(value, (list, tuple)) and value:
        return _tiny_sequence(name, value, shrinking)
    if isinstance(value, dict) and name == "rope_parameters":
        return _tiny_rope(value, shrinking)
    return _UNCHANGED


def _tiny_int(name: str, value: int, shrinking: _Shrinking) -> Any:
    level, original_layers = shrinking.level, shrinking.original_layers
    if _VOCAB.match(name):
        return min(value, level.vocab) if value > 0 else value
    if _TOKEN_ID.match(name) and not _KEEP.match(name) and not _LAYERS.match(name):
        return shrinking.tokens.remap(value) if value >= 0 else value
    if original_layers and value == original_layers and _LAYERS.match(name):
        return len(shrinking.kept)
    if shrinking.mla and _KV_HEADS.match(name):
        return level.heads
    new = _shrink_int(name, value, level, original_layers)
    return new if new is not None and new != value else _UNCHANGED


def _tiny_sequence(name: str, value: list | tuple, shrinking: _Shrinking) -> Any:
    """A non-empty list field: token ids remapped, per-layer lists cut to the kept layers, channel lists shrunk."""
    ints = all(_is_int(v) for v in value)
    if isinstance(value, list) and ints and _TOKEN_ID.match(name):
        return [shrinking.tokens.remap(v) if v >= 0 else v for v in value]
    if _is_per_layer(name, value, shrinking.original_layers, ints=ints):
        # Per-layer lists (layer_types, mlp_only_layers as flags, ...) follow the new depth.
        picked = [value[i] for i in shrinking.kept]
        return [min(v, 16) for v in picked] if _WINDOW.match(name) else picked
    if ints:
        new_list = _shrink_int_list(name, list(value), shrinking.level, shrinking.ratio)
        return new_list if new_list is not None and new_list != list(value) else _UNCHANGED
    return _UNCHANGED


def _is_per_layer(name: str, value: list | tuple, original_layers: int | None, *, ints: bool) -> bool:
    """Whether a list as long as the original depth is one entry per layer, not a size that happens to match."""
    if not original_layers or len(value) != original_layers:
        return False
    per_layer = name in ("layer_types",) or not ints
    return per_layer or name.endswith(("_per_layer", "s")) or original_layers >= 6


def _tiny_rope(value: dict, shrinking: _Shrinking) -> Any:
    # Multimodal rope sections; a config that leaves them to its modeling code's default
    # (Qwen2-VL's [16, 24, 24]) says so by exempting them from its rope validation.
    exempt = "mrope_section" in getattr(shrinking.config_type, "ignore_keys_at_rope_validation", ())
    if value.get("mrope_section") or exempt:
        return _rope({"mrope_section": [16, 24, 24], **value}, shrinking.level)
    return _UNCHANGED


def _kept_layers(values: Mapping[str, Any], original: int | None, new: int | None) -> list[int]:
    """Which of the original layers the tiny model keeps: the first ones, plus the first layer of every
    kind a hybrid model mixes (linear and full attention, dense and sparse MLP), so each kind still runs."""
    if not original or not new:
        return []
    kinds = [
        v
        for v in values.values()
        if isinstance(v, (list, tuple)) and len(v) == original and v and not all(_is_int(x) for x in v)
    ]
    firsts: dict[Any, int] = {}
    for per_layer in kinds:
        for index, kind in enumerate(per_layer):
            firsts.setdefault((id(per_layer), repr(kind)), index)
    picked = sorted(set(firsts.values()))[:4]  # at most 4 layers, however many kinds
    for index in range(original):
        if len(picked) >= new:
            break
        if index not in picked:
            picked = sorted({*picked, index})
    return picked


# Fields the config computes or that describe the checkpoint, never passed back.
_NEVER_PASS = frozenset(
    {
        "transformers_version",
        "architectures",
        "name_or_path",
        "torch_dtype",
        "dtype",
        "attribute_map",
        "sub_configs",
        "base_config_key",
        "model_type",
        "id2label",
        "label2id",
    }
)


def _shrink_int_list(name: str, values: list[int], level: Level, ratio: float) -> list[int] | None:
    if _CHANNEL_LISTS.match(name) and not _PATCH.match(name) and not _IMAGE.match(name):
        return _scaled_list(values, ratio)
    if _KEEP.match(name):
        return None
    if _LAYERS.match(name) or name in ("depths",):
        return [min(v, 1) for v in values]
    if _HEADS.match(name):
        return [min(v, level.heads) for v in values]
    if _IMAGE.match(name):
        return [min(v, level.image) for v in values]
    if _PATCH.match(name):
        return [min(v, level.patch) for v in values]
    if _WIDTH.match(name):
        return _scaled_list(values, ratio)
    return None


def _rope(params: Mapping[str, Any], level: Level) -> dict[str, Any]:
    """Multimodal rope sections sum to half the head dimension: spread them over the tiny one."""
    params = dict(params)
    section = params.get("mrope_section")
    if not isinstance(section, list) or not section:
        return params
    if section:
        half = (level.width // level.heads) // 2
        base, extra = divmod(half, len(section))
        params["mrope_section"] = [base + (1 if i < extra else 0) for i in range(len(section))]
    return params
