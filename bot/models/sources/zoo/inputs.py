"""Deterministic tiny input batches, chosen per modality from a class's forward signature and config.

The kind of batch follows `main_input_name` (input_ids, pixel_values, input_values,
input_features) and what the config says (an image token id makes a vision-language batch,
an encoder-decoder config adds decoder ids). Every tensor draws from its own fixed seed, so a
batch never depends on how many tensors were drawn before it, nor on the process.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import torch

from bot.models.sources.base import NotBuildable

BATCH = 2
PADDED = 2  # positions of the second row that the attention mask masks out
SEED = 0
SEQ_LENGTH = 7
DECODER_LENGTH = 5
CHOICES = 3
SAMPLES = 6400  # waveform samples: 20 frames through a wav2vec2-style encoder, enough for an x-vector's TDNN
FRAMES = 64  # feature frames of a spectrogram input
# Token ids below this are never drawn as text: they usually hold pad/bos/eos/unk.
_FIRST_TEXT_ID = 4

_IMAGE_TOKEN_FIELDS = ("image_token_id", "image_token_index")
_VISION_CONFIG_FIELDS = ("vision_config", "vision_tower_config", "visual_config")


def _generator(offset: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(SEED + offset)


def _special_ids(config: Any) -> set[int]:
    """Every token id any part of the config names: text draws avoid them all."""
    found: set[int] = set()

    def walk(part: Any) -> None:
        for name, value in vars(part).items():
            if hasattr(value, "to_dict") and hasattr(value, "model_type"):
                walk(value)
            elif name.endswith(("token_id", "token_index", "_token_ids")) or name in ("pad_token_id",):
                values = value if isinstance(value, (list, tuple)) else [value]
                found.update(v for v in values if isinstance(v, int) and not isinstance(v, bool))

    walk(config)
    return found


def _text_ids(config: Any, vocab_size: int, shape: tuple[int, ...], offset: int = 1) -> torch.Tensor:
    allowed = [i for i in range(min(_FIRST_TEXT_ID, vocab_size - 1), vocab_size) if i not in _special_ids(config)]
    if not allowed:
        raise NotBuildable(f"no text token ids left in a vocabulary of {vocab_size}")
    picks = torch.randint(0, len(allowed), shape, generator=_generator(offset))
    return torch.tensor(allowed)[picks]


def _padding_mask(length: int, *, left: bool) -> torch.Tensor:
    """All ones, except PADDED positions of the last row: at its end, or (decoder generate) its start."""
    mask = torch.ones(BATCH, length, dtype=torch.long)
    if left:
        mask[-1, :PADDED] = 0
    else:
        mask[-1, -PADDED:] = 0
    return mask


def _pad(ids: torch.Tensor, mask: torch.Tensor, pad_token_id: int | None) -> torch.Tensor:
    # Masked positions hold the pad token, as a tokenizer's padding would leave them.
    return ids.masked_fill(mask == 0, pad_token_id if isinstance(pad_token_id, int) else 0)


def text_config(config: Any) -> Any:
    try:
        return config.get_text_config()
    except Exception:  # configs without the accessor
        return config


def _vocab(config: Any) -> int:
    vocab = getattr(text_config(config), "vocab_size", None) or getattr(config, "vocab_size", None)
    # CANINE hashes Unicode code points into buckets: any id below the bucket count is a character.
    vocab = vocab or find(config, ("vocab_size", "text_vocab_size", "input_vocab_size", "num_hash_buckets"))
    if not isinstance(vocab, int) or vocab < 2:
        raise NotBuildable("the config names no vocabulary size for its input_ids")
    return vocab


def text(config: Any, *, left: bool = False, length: int = SEQ_LENGTH, mask: bool = True) -> dict[str, torch.Tensor]:
    pad = getattr(text_config(config), "pad_token_id", None)
    ids = _text_ids(config, _vocab(config), (BATCH, length))
    if not mask:
        return {"input_ids": ids}
    attention = _padding_mask(length, left=left)
    return {"input_ids": _pad(ids, attention, pad), "attention_mask": attention}


def with_final_eos(config: Any, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    eos = getattr(config, "eos_token_id", None)
    eos = eos[0] if isinstance(eos, (list, tuple)) else eos
    if not isinstance(eos, int):
        return batch
    ids, mask = batch["input_ids"].clone(), batch["attention_mask"]
    ids[ids == eos] = _FIRST_TEXT_ID if eos != _FIRST_TEXT_ID else _FIRST_TEXT_ID + 1
    last = mask.sum(dim=1) - 1
    ids[torch.arange(BATCH), last] = eos
    return {**batch, "input_ids": ids}


def decoder_ids(config: Any, length: int = DECODER_LENGTH) -> torch.Tensor:
    # The config's own fields first: some configs hand back a default-sized copy as their decoder config.
    ids = _text_ids(config, _vocab(config), (BATCH, length), offset=5)
    start = getattr(config, "decoder_start_token_id", None)
    if start is None:
        start = getattr(text_config(config), "decoder_start_token_id", None)
    if isinstance(start, int):
        ids[:, 0] = start
    return ids


def find(config: Any, names: Iterable[str], default: Any = None) -> Any:
    """The first of `names` set on the config, else on its sub-configs (breadth first: vision, audio, encoder ...)."""
    names = tuple(names)
    queue, seen = [config], set()
    while queue:
        part = queue.pop(0)
        if id(part) in seen:
            continue
        seen.add(id(part))
        for name in names:
            value = getattr(part, name, None)
            if value is not None and not (hasattr(value, "to_dict") and hasattr(value, "model_type")):
                return value
        queue.extend(v for v in vars(part).values() if hasattr(v, "to_dict") and hasattr(v, "model_type"))
    return default


def _side(value: Any) -> tuple[int, int]:
    if isinstance(value, (list, tuple)):
        return int(value[0]), int(value[-1])
    if isinstance(value, dict):
        return int(value.get("height", 32)), int(value.get("width", 32))
    return int(value), int(value)


def pixels(config: Any, *, video: bool = False) -> torch.Tensor:
    height, width = _side(find(config, ("image_size", "img_size", "crop_size"), 32))
    channels = find(config, ("num_channels", "in_channels", "input_channels"), 3)
    shape: tuple[int, ...] = (BATCH, int(channels), height, width)
    if video:
        shape = (BATCH, int(find(config, ("num_frames", "frames_per_clip"), 4)), *shape[1:])
    return torch.randn(shape, generator=_generator(2))


GRID = 4  # patches per side of a Qwen2-VL-style image: a multiple of the usual 2×2 spatial merge


def grid_patches(config: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """Flattened patches [images × h × w, channels × t × p × p] and the grid [[1, h, w]] per image."""
    patch = int(find(config, ("patch_size",), 14))
    temporal = int(find(config, ("temporal_patch_size",), 2))
    channels = int(find(config, ("in_channels", "num_channels", "in_chans"), 3))
    side = GRID * int(find(config, ("spatial_merge_size",), 2)) // 2
    patches = torch.randn(BATCH * side * side, channels * temporal * patch * patch, generator=_generator(7))
    return patches, torch.tensor([[1, side, side]] * BATCH)


def waveform(signature: Iterable[str]) -> dict[str, torch.Tensor]:
    values = torch.randn(BATCH, SAMPLES, generator=_generator(3))
    mask = torch.ones(BATCH, SAMPLES, dtype=torch.long)
    mask[-1, -SAMPLES // 4 :] = 0
    # A feature extractor pads with zeros; the mask says where.
    batch = {"input_values": values * mask}
    if "attention_mask" in signature:
        batch["attention_mask"] = mask
    return batch


def features(config: Any) -> dict[str, torch.Tensor]:
    """Spectrogram features: Whisper-style [batch, mel bins, 2 × max source positions], else [batch, frames, features]."""
    generator = _generator(4)
    bins = find(
        config,
        ("num_mel_bins", "n_mels", "feature_size", "input_feat_size", "input_dim", "feature_projection_input_dim"),
    )
    sources = find(config, ("max_source_positions",))
    if bins and sources and find(config, ("num_mel_bins",)) is not None and _whisper_like(config):
        return {"input_features": torch.randn(BATCH, int(bins), 2 * int(sources), generator=generator)}
    per_channel = find(config, ("input_feat_per_channel",))
    if per_channel:
        bins = int(per_channel) * int(find(config, ("input_channels",), 1))
    if not bins:
        raise NotBuildable("the config names no feature size for its input_features")
    return {"input_features": torch.randn(BATCH, FRAMES, int(bins), generator=generator)}


def _whisper_like(config: Any) -> bool:
    # Whisper's encoder convolves over time with the mel bins as channels and checks the frame count.
    return getattr(config, "model_type", "").startswith(("whisper", "qwen2_audio", "voxtral", "granite_speech")) or (
        "whisper" in type(getattr(config, "audio_config", None)).__name__.lower()
    )


def image_token(config: Any) -> int | None:
    for name in _IMAGE_TOKEN_FIELDS:
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return None


def vlm(config: Any, image_tokens: int, pixel_values: torch.Tensor, *, left: bool) -> dict[str, torch.Tensor]:
    """Each row: its image tokens then text; padding never splits the image tokens of a row."""
    batch = text(config, left=left)
    image = torch.full((BATCH, image_tokens), image_token(config), dtype=torch.long)
    ids = torch.cat([image, batch["input_ids"]], dim=1)
    mask = torch.cat([torch.ones_like(image), batch["attention_mask"]], dim=1)
    if left:
        # Move the padding of the last row in front of its image tokens.
        kept = ids[-1][mask[-1].bool()]
        ids[-1] = torch.cat([ids[-1][~mask[-1].bool()], kept])
        mask[-1] = torch.cat([mask[-1][~mask[-1].bool()], mask[-1][mask[-1].bool()]])
    return {"input_ids": ids, "attention_mask": mask, "pixel_values": pixel_values}


def forward_signature(model_class: type) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(model_class.forward).parameters)


def required(model_class: type) -> list[str]:
    """Forward parameters without a default (self and **kwargs aside)."""
    return [
        name
        for name, p in forward_signature(model_class).items()
        if name != "self"
        and p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
