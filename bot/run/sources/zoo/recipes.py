"""The zoo's recipe table as plain data: importable without torch or transformers (selection reads it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Input kinds (how `bot.run.sources.zoo.inputs` makes a batch for a recipe):
#   text            input_ids + attention_mask                       [batch, seq]
#   multiple-choice input_ids + attention_mask                       [batch, choices, seq]
#   seq2seq         input_ids + attention_mask + decoder_input_ids
#   image           pixel_values                                     [batch, channels, size, size]
#   waveform        input_values + attention_mask                    [batch, samples]
#   mel             input_features (+ decoder_input_ids)             [batch, mel bins, frames]
#   text-image      input_ids + attention_mask + pixel_values
#   vlm             input_ids with image tokens + attention_mask + pixel_values
INPUT_KINDS = ("text", "multiple-choice", "seq2seq", "image", "waveform", "mel", "text-image", "vlm")


@dataclass(frozen=True)
class Recipe:
    """How to build one model class tiny: config overrides and the kind of inputs it takes."""

    model_type: str
    family: str  # one of bot.run.sources.base.FAMILIES
    inputs: str  # one of INPUT_KINDS
    config: Mapping[str, Any]  # keyword arguments of the model type's config class
    generative: bool = False
    # The config's own model_type when it differs from the modeling module's (`clip_text_model`).
    config_type: str | None = None
    # Sizes of the inputs beyond what the config says (sequence length, image size, ...).
    shape: Mapping[str, int] = field(default_factory=dict)


# Every model is about hidden 32, 2 layers, 2 heads, a small vocabulary: the upstream testers' sizes.
_TEXT = {"seq_length": 7}
_BERT = dict(
    vocab_size=99,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=37,
    max_position_embeddings=64,
    type_vocab_size=2,
)
_ROBERTA = dict(_BERT, pad_token_id=1, bos_token_id=0, eos_token_id=2)
_DISTILBERT = dict(vocab_size=99, dim=32, n_layers=2, n_heads=2, hidden_dim=37, max_position_embeddings=64)
# GPT-2's default special tokens (50256) lie outside a tiny vocabulary: upstream's tester uses the last id.
_GPT2 = dict(
    vocab_size=99,
    n_embd=32,
    n_layer=2,
    n_head=2,
    n_inner=37,
    n_positions=64,
    bos_token_id=98,
    eos_token_id=98,
    pad_token_id=98,
)
# pad_token_id: sequence classification needs it to find the last token of each row of a batch.
# One layer (the others have two): ExecuTorch's XNNPACK lowering time grows with the graph, and
# the Llama generate row dominates the smoke preset (87 s → 48 s for its slowest cell), which
# must finish in under 5 minutes on 2 cores. The cache and decode paths are the same per layer.
_LLAMA = dict(
    vocab_size=99,
    hidden_size=32,
    num_hidden_layers=1,
    num_attention_heads=2,
    num_key_value_heads=1,
    intermediate_size=37,
    max_position_embeddings=64,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
)
_QWEN2 = dict(_LLAMA)
_MISTRAL = dict(_LLAMA, sliding_window=None)
_T5 = dict(
    vocab_size=99,
    d_model=32,
    d_kv=16,
    d_ff=37,
    num_layers=2,
    num_decoder_layers=2,
    num_heads=2,
    relative_attention_num_buckets=8,
    pad_token_id=0,
    eos_token_id=1,
    decoder_start_token_id=0,
)
_BART = dict(
    vocab_size=99,
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=37,
    decoder_ffn_dim=37,
    max_position_embeddings=64,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
    decoder_start_token_id=2,
    forced_eos_token_id=None,
)
_VIT = dict(
    image_size=32,
    patch_size=8,
    num_channels=3,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=37,
)
_RESNET = dict(num_channels=3, embedding_size=8, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1])
_CONVNEXT = dict(num_channels=3, hidden_sizes=[8, 16, 24, 32], depths=[1, 1, 1, 1], image_size=32)
_IMAGE = {"image_size": 32, "num_channels": 3}
_WAV2VEC2 = dict(
    vocab_size=32,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=20,
    conv_dim=[16, 16, 16],
    conv_stride=[4, 4, 4],
    conv_kernel=[8, 8, 8],
    num_conv_pos_embeddings=16,
    num_conv_pos_embedding_groups=2,
    classifier_proj_size=8,
    apply_spec_augment=False,
)
_WAVEFORM = {"samples": 1024}
# Whisper's encoder wants exactly 2 * max_source_positions frames.
_WHISPER = dict(
    vocab_size=99,
    d_model=32,
    encoder_layers=2,
    decoder_layers=2,
    encoder_attention_heads=2,
    decoder_attention_heads=2,
    encoder_ffn_dim=37,
    decoder_ffn_dim=37,
    num_mel_bins=16,
    max_source_positions=16,
    max_target_positions=32,
    pad_token_id=0,
    bos_token_id=98,
    eos_token_id=97,
    decoder_start_token_id=85,
    classifier_proj_size=8,
    # The defaults name GPT-2 vocabulary ids (220, 50256) that a tiny vocabulary lacks.
    suppress_tokens=None,
    begin_suppress_tokens=None,
)
_MEL = {"frames": 32, "decoder_length": 4}
# eos_token_id 2 keeps CLIP's pooling on the argmax of input_ids (its legacy rule), as upstream's tester.
_CLIP_TEXT = dict(
    vocab_size=99,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=37,
    max_position_embeddings=64,
    projection_dim=16,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
)
_CLIP_VISION = dict(
    image_size=16,
    patch_size=4,
    num_channels=3,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=37,
    projection_dim=16,
)
_CLIP = dict(text_config=_CLIP_TEXT, vision_config=_CLIP_VISION, projection_dim=16)
_TEXT_IMAGE = {"seq_length": 7, "image_size": 16, "num_channels": 3}
# A Llava of a tiny Llama and a tiny CLIP vision tower: 8x8 images in 2x2 patches are 16 image
# tokens (the `default` strategy drops CLS), placed at the start of each row (image_token_index 3).
_LLAVA = dict(
    text_config=dict(_LLAMA, model_type="llama"),
    vision_config=dict(_CLIP_VISION, model_type="clip_vision_model", image_size=8, patch_size=2),
    image_token_index=3,
    image_seq_length=16,
    vision_feature_layer=-1,
    vision_feature_select_strategy="default",
    projector_hidden_act="gelu",
)
_VLM = {"seq_length": 7, "image_size": 8, "num_channels": 3, "image_tokens": 16}


def _family(model_type: str, family: str, inputs: str, config: dict, shape: dict, **classes: str) -> dict:
    """Recipes for several classes of one model type; `classes` maps class name → `gen` or `fwd`."""
    return {
        name: Recipe(model_type, family, inputs, config, generative=(role == "gen"), shape=shape)
        for name, role in classes.items()
    }


RECIPES: dict[str, Recipe] = {
    **_family(
        "bert",
        "text-encoder",
        "text",
        _BERT,
        _TEXT,
        BertModel="fwd",
        BertForSequenceClassification="fwd",
        BertForMaskedLM="fwd",
        BertForTokenClassification="fwd",
        BertForQuestionAnswering="fwd",
        BertForNextSentencePrediction="fwd",
        BertForPreTraining="fwd",
    ),
    **_family("bert", "text-encoder", "multiple-choice", _BERT, _TEXT, BertForMultipleChoice="fwd"),
    **_family(
        "roberta",
        "text-encoder",
        "text",
        _ROBERTA,
        _TEXT,
        RobertaModel="fwd",
        RobertaForSequenceClassification="fwd",
        RobertaForMaskedLM="fwd",
    ),
    **_family(
        "distilbert",
        "text-encoder",
        "text",
        _DISTILBERT,
        _TEXT,
        DistilBertModel="fwd",
        DistilBertForSequenceClassification="fwd",
        DistilBertForQuestionAnswering="fwd",
    ),
    **_family("gpt2", "decoder", "text", _GPT2, _TEXT, GPT2Model="fwd", GPT2LMHeadModel="gen"),
    **_family(
        "llama",
        "decoder",
        "text",
        _LLAMA,
        _TEXT,
        LlamaModel="fwd",
        LlamaForCausalLM="gen",
        LlamaForSequenceClassification="fwd",
    ),
    **_family("qwen2", "decoder", "text", _QWEN2, _TEXT, Qwen2Model="fwd", Qwen2ForCausalLM="gen"),
    **_family("mistral", "decoder", "text", _MISTRAL, _TEXT, MistralModel="fwd", MistralForCausalLM="gen"),
    **_family(
        "t5",
        "encoder-decoder",
        "seq2seq",
        _T5,
        _TEXT,
        T5Model="fwd",
        T5ForConditionalGeneration="gen",
    ),
    **_family("t5", "text-encoder", "text", _T5, _TEXT, T5EncoderModel="fwd"),
    **_family(
        "bart",
        "encoder-decoder",
        "seq2seq",
        _BART,
        _TEXT,
        BartModel="fwd",
        BartForConditionalGeneration="gen",
    ),
    **_family("vit", "vision", "image", _VIT, _IMAGE, ViTModel="fwd", ViTForImageClassification="fwd"),
    **_family("resnet", "vision", "image", _RESNET, _IMAGE, ResNetModel="fwd", ResNetForImageClassification="fwd"),
    **_family(
        "convnext",
        "vision",
        "image",
        _CONVNEXT,
        _IMAGE,
        ConvNextModel="fwd",
        ConvNextForImageClassification="fwd",
    ),
    **_family(
        "wav2vec2",
        "audio",
        "waveform",
        _WAV2VEC2,
        _WAVEFORM,
        Wav2Vec2Model="fwd",
        Wav2Vec2ForCTC="fwd",
        Wav2Vec2ForSequenceClassification="fwd",
    ),
    **_family(
        "whisper",
        "audio",
        "mel",
        _WHISPER,
        _MEL,
        WhisperModel="fwd",
        WhisperForConditionalGeneration="gen",
    ),
    **_family("whisper", "audio", "mel", _WHISPER, dict(_MEL, decoder_length=0), WhisperForAudioClassification="fwd"),
    **_family("clip", "multimodal", "text-image", _CLIP, _TEXT_IMAGE, CLIPModel="fwd"),
    "CLIPTextModel": Recipe("clip", "multimodal", "text", _CLIP_TEXT, config_type="clip_text_model", shape=_TEXT),
    "CLIPVisionModel": Recipe(
        "clip", "multimodal", "image", _CLIP_VISION, config_type="clip_vision_model", shape=_TEXT_IMAGE
    ),
    **_family("llava", "multimodal", "vlm", _LLAVA, _VLM, LlavaModel="fwd", LlavaForConditionalGeneration="gen"),
}

PRESETS: dict[str, tuple[str, ...]] = {
    # The main job's default: forward (BERT, ViT) and generate (Llama); all four backends in < 5 min.
    "smoke": ("BertModel", "LlamaForCausalLM", "ViTModel"),
    # Run when a PR touches shared export code: one or two classes per family.
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
    "all": tuple(RECIPES),
}
