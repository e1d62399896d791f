"""Build one model class tiny: shrink its config class, size it on the meta device, make its inputs.

Imports torch and transformers: only `ZooSource.build` and `export-bot zoo coverage` load it.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from bot.models.catalog import CatalogEntry
from bot.models.sources.base import BuildError, NotBuildable
from bot.models.sources.zoo import inputs as make
from bot.models.sources.zoo.recipes import Override
from bot.models.sources.zoo.shrink import LEVELS, _Tokens, config_kwargs

PARAMETER_CAP = 3_000_000


@dataclass(frozen=True)
class Tiny:
    """A tiny config (fresh) and the parameter count it was sized at."""

    config: Any
    parameters: int


def model_class_of(name: str) -> type:
    import transformers

    cls = getattr(transformers, name, None)
    if cls is None:
        raise NotBuildable(f"transformers {transformers.__version__} exports no class {name}")
    return cls


def _merge(base: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def tiny_kwargs(cls: type, override: Override | None, level_index: int) -> dict[str, Any]:
    """The keyword arguments of `cls.config_class` that make it tiny at one size level."""
    config_class = cls.config_class
    try:
        default = config_class()
    except Exception as exc:
        raise NotBuildable(f"{config_class.__name__}() fails with its own defaults: {_short(exc)}") from exc
    level = LEVELS[level_index]
    kwargs = config_kwargs(default, level, _Tokens(level.vocab))
    if override is not None:
        kwargs = _merge(kwargs, override.config)
    return kwargs


def parameters_on_meta(cls: type, config: Any) -> int:
    """The parameter count of `cls(config)` without allocating a byte."""
    with torch.device("meta"):
        model = cls(copy.deepcopy(config))
    return sum(p.numel() for p in model.parameters())


def tiny_config(cls: type, override: Override | None = None) -> Tiny:
    """The first size level whose model fits the cap; NotBuildable when none does."""
    counts = []
    for index in range(len(LEVELS)):
        kwargs = tiny_kwargs(cls, override, index)
        config = _construct(cls, kwargs)
        try:
            count = parameters_on_meta(cls, config)
        except Exception as exc:
            raise BuildError(f"{cls.__name__} cannot be built from the tiny config: {_short(exc)}") from exc
        if count <= PARAMETER_CAP:
            return Tiny(_finish(cls, _construct(cls, kwargs)), count)
        counts.append(count)
    raise NotBuildable(
        f"{counts[-1] / 1e6:.1f}M parameters at the zoo's smallest sizes (cap {PARAMETER_CAP / 1e6:.0f}M): "
        f"{_largest(cls, _construct(cls, tiny_kwargs(cls, override, len(LEVELS) - 1)))}"
    )


def _construct(cls: type, kwargs: dict[str, Any]) -> Any:
    """`config_class(**kwargs)`; when it rejects grouped-query attention, again with as many kv heads as heads."""
    try:
        return cls.config_class(**copy.deepcopy(kwargs))
    except Exception as exc:
        first = exc
    if "key_value_heads" in str(first) or "kv_heads" in str(first):
        try:
            return cls.config_class(**_no_gqa(copy.deepcopy(kwargs)))
        except Exception:
            pass
    raise BuildError(f"{cls.config_class.__name__} rejected the tiny sizes: {_short(first)}") from first


def _no_gqa(kwargs: dict[str, Any]) -> dict[str, Any]:
    heads = kwargs.get("num_attention_heads")
    for key in ("num_key_value_heads", "num_kv_heads"):
        if key in kwargs and heads:
            kwargs[key] = heads
    for key, value in kwargs.items():
        if isinstance(value, dict):
            kwargs[key] = _no_gqa(value)
    return kwargs


def _finish(cls: type, config: Any) -> Any:
    """Per-head fixes the config's sizes cannot express."""
    if cls.__name__.endswith("ForSequenceClassification"):
        # A batch of 2 needs a pad token to find each row's last token; upstream's testers set one too.
        for part in {id(c): c for c in (config, make.text_config(config))}.values():
            if getattr(part, "pad_token_id", 0) is None:
                part.pad_token_id = 0
    return config


def _largest(cls: type, config: Any) -> str:
    with torch.device("meta"):
        model = cls(config)
    sizes = sorted(((p.numel(), n) for n, p in model.named_parameters()), reverse=True)[:2]
    return "largest " + ", ".join(f"{n} {c / 1e6:.1f}M" for c, n in sizes)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:240]}"


# ---------------------------------------------------------------------------------------------
# Inputs


def forward_inputs(cls: type, config: Any, entry: CatalogEntry | None, override: Override | None) -> dict[str, Any]:
    return _inputs(cls, config, entry, override, generate=False)


def generate_inputs(cls: type, config: Any, entry: CatalogEntry | None, override: Override | None) -> dict[str, Any]:
    return _inputs(cls, config, entry, override, generate=True)


def _inputs(cls: type, config: Any, entry: CatalogEntry | None, override: Override | None, *, generate: bool) -> dict:
    signature = make.forward_signature(cls)
    main = getattr(cls, "main_input_name", "input_ids")
    kind = (override.inputs if override and override.inputs else None) or _kind(cls, config, main, signature)
    batch = _batch(kind, cls, config, signature, generate=generate)
    if override and override.extra_inputs:
        batch.update(override.extra_inputs)
    missing = [name for name in make.required(cls) if name not in batch]
    if missing:
        raise NotBuildable(f"forward needs {', '.join(missing)}: the zoo makes no such input")
    return batch


def _kind(cls: type, config: Any, main: str, signature: Mapping[str, Any]) -> str:
    name = cls.__name__
    needed = make.required(cls)
    if "grid_thw" in signature and needed:
        return "grid-vision"
    main = _taken_main(main, signature)
    if main == "pixel_values" and "input_ids" in needed:
        # BLIP-2 / Grounding DINO style: an image and the text it conditions.
        return "vlm" if make.image_token(config) is not None and _has_vision(config) else "text-image"
    if main == "input_ids" or (main not in signature and "input_ids" in signature):
        return _text_kind(name, config, signature)
    return _media_kind(name, config, main, signature)


def _taken_main(main: str, signature: Mapping[str, Any]) -> str:
    """The main input name, or `pixel_values` for a forward that takes neither it nor token ids but takes pixels."""
    if main not in signature and "input_ids" not in signature and "pixel_values" in signature:
        return "pixel_values"  # vision towers that inherit the default main input name
    return main


def _media_kind(name: str, config: Any, main: str, signature: Mapping[str, Any]) -> str:
    """The kind of a model whose main input is pixels, audio or audio features."""
    if main == "pixel_values":
        return "video" if "Video" in name or "video" in config.model_type else "image"
    if main == "input_values":
        return "waveform"
    if main == "input_features":
        return "features-seq2seq" if "decoder_input_ids" in signature else "features"
    raise NotBuildable(f"main input {main!r}: the zoo makes no inputs of this kind yet")


def _text_kind(name: str, config: Any, signature: Mapping[str, Any]) -> str:
    """The kind of a model whose main input is token ids: what else its forward takes decides."""
    if "MultipleChoice" in name:
        return "multiple-choice"
    if make.image_token(config) is not None and _has_vision(config):
        return "vlm"
    if "pixel_values" in signature and _has_vision(config):
        return "text-image"
    if "bbox" in signature:
        return "text-layout"
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in signature:
        return "seq2seq"
    return "text"


def _has_vision(config: Any) -> bool:
    return any(getattr(config, f, None) is not None for f in ("vision_config", "vision_tower_config", "visual_config"))


def _batch(kind: str, cls: type, config: Any, signature: Mapping[str, Any], *, generate: bool) -> dict[str, Any]:
    make_batch = _BATCHES.get(kind)
    if make_batch is None:
        raise ValueError(f"unknown input kind {kind!r}")
    return make_batch(cls, config, signature, generate)


def _text_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    # Decoder-only generation pads on the left, so every row ends in a real token.
    return make.text(config, left=generate, mask="attention_mask" in signature)


def _multiple_choice_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    batch = make.text(config)
    return {k: v.unsqueeze(1).expand(-1, make.CHOICES, -1).contiguous() for k, v in batch.items()}


def _seq2seq_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    batch = make.text(config)
    if cls.__name__.endswith(("ForSequenceClassification", "ForQuestionAnswering")):
        # BART-style heads pool at the eos token, which every row must hold exactly once, last;
        # the decoder then starts from the shifted input_ids, as upstream's testers leave it.
        return make.with_final_eos(config, batch)
    if not generate:
        batch["decoder_input_ids"] = make.decoder_ids(config)
    return batch


def _text_layout_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    batch = make.text(config)
    # Boxes (x0, y0, x1, y1) inside the config's 2-D position range (LayoutLM's 0-1000).
    limit = min(1000, int(getattr(config, "max_2d_position_embeddings", 1024) or 1024) - 1)
    boxes = torch.randint(0, limit // 2, (make.BATCH, make.SEQ_LENGTH, 2), generator=make._generator(6))
    batch["bbox"] = torch.cat([boxes, boxes + limit // 4], dim=-1)
    return batch


def _text_image_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    return {**make.text(config), "pixel_values": make.pixels(config)}


def _vlm_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if _takes_grid(cls):
        pixel_values, extra["image_grid_thw"] = make.grid_patches(config)
    else:
        pixel_values = make.pixels(config)
    tokens = _image_tokens(cls, config, pixel_values, extra)
    batch = {**make.vlm(config, tokens, pixel_values, left=generate), **extra}
    if extra and "mm_token_type_ids" in signature:
        # Grid-patch models also take which tokens are image tokens (1) and which text (0).
        batch["mm_token_type_ids"] = (batch["input_ids"] == make.image_token(config)).long()
    return batch


def _image_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    return {"pixel_values": make.pixels(config)}


def _grid_vision_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    patches, grid = make.grid_patches(config)
    return {make.required(cls)[0]: patches, "grid_thw": grid}


def _video_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    return {"pixel_values": make.pixels(config, video=True)}


def _waveform_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    return make.waveform(signature)


def _features_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    return make.features(config)


def _features_seq2seq_batch(cls: type, config: Any, signature: Mapping[str, Any], generate: bool) -> dict[str, Any]:
    batch = make.features(config)
    if not generate:
        batch["decoder_input_ids"] = make.decoder_ids(config)
    return batch


# One input maker per kind `_kind` names; each takes (cls, config, forward signature, generate).
_BATCHES: dict[str, Callable[[type, Any, Mapping[str, Any], bool], dict[str, Any]]] = {
    "text": _text_batch,
    "multiple-choice": _multiple_choice_batch,
    "seq2seq": _seq2seq_batch,
    "text-layout": _text_layout_batch,
    "text-image": _text_image_batch,
    "vlm": _vlm_batch,
    "image": _image_batch,
    "grid-vision": _grid_vision_batch,
    "video": _video_batch,
    "waveform": _waveform_batch,
    "features": _features_batch,
    "features-seq2seq": _features_seq2seq_batch,
}


def _takes_grid(cls: type) -> bool:
    """Qwen2-VL-style vision towers take flattened patches and each image's (t, h, w) patch grid."""
    get = getattr(cls, "get_image_features", None)
    try:
        return get is not None and "image_grid_thw" in inspect.signature(get).parameters
    except (TypeError, ValueError):
        return False


def _image_tokens(cls: type, config: Any, pixel_values: torch.Tensor, extra: Mapping[str, Any]) -> int:
    """How many image tokens one image becomes: the model's own `get_image_features` counts them."""
    fixed = getattr(config, "image_seq_length", None) or getattr(config, "mm_tokens_per_image", None)
    with torch.random.fork_rng():
        torch.manual_seed(make.SEED)
        model = cls(copy.deepcopy(config)).eval()
    get = getattr(model, "get_image_features", None)
    if get is None:
        if fixed:
            return int(fixed)
        raise NotBuildable(f"{cls.__name__} has no get_image_features to count its image tokens")
    with torch.no_grad():
        try:
            features = get(pixel_values=pixel_values, **extra)
        except Exception as exc:
            raise BuildError(f"counting image tokens: get_image_features failed: {_short(exc)}") from exc
        if features is None:
            raise BuildError("counting image tokens: get_image_features returned nothing")
    if hasattr(features, "pooler_output") and features.pooler_output is not None:
        features = features.pooler_output
    elif hasattr(features, "last_hidden_state"):
        features = features.last_hidden_state
    if isinstance(features, (list, tuple)):
        total = sum(f.reshape(-1, f.shape[-1]).shape[0] for f in features)
    else:
        total = features.reshape(-1, features.shape[-1]).shape[0]
    if total % make.BATCH:
        raise BuildError(f"{total} image features do not split over a batch of {make.BATCH}")
    return total // make.BATCH


def prepare_generate_config(config: Any) -> None:
    """As upstream's GenerationTesterMixin: no eos, so generation never stops early; pad falls back to eos."""
    if getattr(config, "is_encoder_decoder", False) and getattr(config, "decoder_start_token_id", None) is None:
        # T5-style configs leave the decoder start to a checkpoint's generation config: the pad token, as T5's.
        if getattr(config, "bos_token_id", None) is None:
            pad = getattr(config, "pad_token_id", None)
            config.decoder_start_token_id = pad if isinstance(pad, int) else 0
    parts = [config]
    try:
        parts.append(config.get_text_config(decoder=True))
    except Exception:
        pass
    # Older encoder-decoder configs (BART) hand back a copy as their text config: clear both.
    for part in {id(c): c for c in parts}.values():
        eos = getattr(part, "eos_token_id", None)
        if eos is not None and getattr(part, "pad_token_id", None) is None:
            part.pad_token_id = eos if isinstance(eos, int) else eos[0]
        part.eos_token_id = None
        if hasattr(part, "forced_eos_token_id"):
            part.forced_eos_token_id = None


def seed_weights() -> None:
    """Seed torch's global generator: the runner builds the model right after `build` returns, so
    its initial weights are the same in every process."""
    torch.manual_seed(make.SEED)
