"""Deterministic tiny input batches for the zoo's input kinds (imports torch: only `build` loads it)."""

from __future__ import annotations

from typing import Any

import torch

from bot.run.sources.zoo.recipes import Recipe

BATCH = 2
PADDED = 2  # positions of the second row that the attention mask masks out
SEED = 0
# Token ids below this are never drawn as text: they hold pad/bos/eos and Llava's image token.
_FIRST_TEXT_ID = 4


def _generator(offset: int = 0) -> torch.Generator:
    # One fixed seed per tensor, so a batch never depends on how many tensors were drawn before it.
    return torch.Generator().manual_seed(SEED + offset)


def _text_ids(vocab_size: int, length: int) -> torch.Tensor:
    return torch.randint(_FIRST_TEXT_ID, vocab_size, (BATCH, length), generator=_generator(1))


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
    return ids.masked_fill(mask == 0, pad_token_id if pad_token_id is not None else 0)


def _pixels(shape: dict, size_key: str = "image_size") -> torch.Tensor:
    size = shape[size_key]
    return torch.randn(BATCH, shape["num_channels"], size, size, generator=_generator(2))


def _text(config: Any, recipe: Recipe, *, left: bool) -> dict[str, torch.Tensor]:
    text_config = config.get_text_config()
    length = recipe.shape["seq_length"]
    mask = _padding_mask(length, left=left)
    ids = _pad(_text_ids(text_config.vocab_size, length), mask, text_config.pad_token_id)
    return {"input_ids": ids, "attention_mask": mask}


def _vlm(config: Any, recipe: Recipe, *, left: bool) -> dict[str, torch.Tensor]:
    """Each row: its image tokens then text; padding never splits the image tokens of a row."""
    text = _text(config, recipe, left=left)
    image = torch.full((BATCH, recipe.shape["image_tokens"]), config.image_token_id, dtype=torch.long)
    ids = torch.cat([image, text["input_ids"]], dim=1)
    mask = torch.cat([torch.ones_like(image), text["attention_mask"]], dim=1)
    if left:
        # Move the padding of the last row in front of its image tokens.
        kept = ids[-1][mask[-1].bool()]
        ids[-1] = torch.cat([ids[-1][~mask[-1].bool()], kept])
        mask[-1] = torch.cat([mask[-1][~mask[-1].bool()], mask[-1][mask[-1].bool()]])
    return {"input_ids": ids, "attention_mask": mask, "pixel_values": _pixels(recipe.shape)}


def _waveform(recipe: Recipe) -> dict[str, torch.Tensor]:
    samples = recipe.shape["samples"]
    values = torch.randn(BATCH, samples, generator=_generator(3))
    mask = torch.ones(BATCH, samples, dtype=torch.long)
    mask[-1, -samples // 4 :] = 0
    # A feature extractor pads with zeros; the mask says where.
    return {"input_values": values * mask, "attention_mask": mask}


def _mel(config: Any, recipe: Recipe) -> dict[str, torch.Tensor]:
    frames = 2 * config.max_source_positions
    return {"input_features": torch.randn(BATCH, config.num_mel_bins, frames, generator=_generator(4))}


def _decoder_ids(config: Any, length: int) -> torch.Tensor:
    ids = torch.randint(_FIRST_TEXT_ID, config.vocab_size, (BATCH, length), generator=_generator(5))
    ids[:, 0] = config.decoder_start_token_id
    return ids


def forward_inputs(recipe: Recipe, config: Any) -> dict[str, torch.Tensor]:
    """One forward batch of `recipe`'s input kind, right-padded where the model takes a mask."""
    kind = recipe.inputs
    if kind == "text":
        return _text(config, recipe, left=False)
    if kind == "multiple-choice":
        # As upstream's _prepare_for_class: the same text repeated for each of 3 choices.
        text = _text(config, recipe, left=False)
        return {k: v.unsqueeze(1).expand(-1, 3, -1).contiguous() for k, v in text.items()}
    if kind == "seq2seq":
        return {**_text(config, recipe, left=False), "decoder_input_ids": _decoder_ids(config, 5)}
    if kind == "image":
        return {"pixel_values": _pixels(recipe.shape)}
    if kind == "waveform":
        return _waveform(recipe)
    if kind == "mel":
        inputs = _mel(config, recipe)
        if recipe.shape.get("decoder_length"):
            inputs["decoder_input_ids"] = _decoder_ids(config, recipe.shape["decoder_length"])
        return inputs
    if kind == "text-image":
        return {**_text(config, recipe, left=False), "pixel_values": _pixels(recipe.shape)}
    if kind == "vlm":
        return _vlm(config, recipe, left=False)
    raise ValueError(f"unknown input kind {kind!r} (known: see bot/run/sources/zoo/recipes.py INPUT_KINDS)")


def generate_inputs(recipe: Recipe, config: Any) -> dict[str, torch.Tensor]:
    """`model.generate(**inputs)` keyword arguments, shaped as upstream's testers shape them."""
    kind = recipe.inputs
    if kind == "text":
        # Decoder-only generation pads on the left, so every row ends in a real token.
        return _text(config, recipe, left=True)
    if kind == "seq2seq":
        # As upstream's prepare_config_and_inputs_for_generate: no decoder ids, the decoder starts fresh.
        return _text(config, recipe, left=False)
    if kind == "mel":
        return _mel(config, recipe)
    if kind == "vlm":
        return _vlm(config, recipe, left=True)
    raise ValueError(f"input kind {kind!r} has no generate inputs")
