"""A tiny model for export-bot's end-to-end test (the PR's version): scales memoised per sequence length."""

from dataclasses import dataclass

import torch
from torch import nn
from transformers import PreTrainedConfig, PreTrainedModel
from transformers.utils import ModelOutput


class ToyConfig(PreTrainedConfig):
    model_type = "toy"

    def __init__(self, vocab_size=32, hidden_size=8, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        super().__init__(**kwargs)


@dataclass
class ToyOutput(ModelOutput):
    last_hidden_state: torch.FloatTensor | None = None


class ToyPreTrainedModel(PreTrainedModel):
    config_class = ToyConfig
    base_model_prefix = "toy"
    main_input_name = "input_ids"


class ToyModel(ToyPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)
        self._scales = {}
        self.post_init()

    def forward(self, input_ids):
        # The PR's regression: a dict keyed by the sequence length. A static export sees an int;
        # under dynamic shapes the length is a SymInt, which is unhashable, so only dynamic cells break.
        seq_len = input_ids.shape[1]
        if seq_len not in self._scales:
            self._scales[seq_len] = 1.0 / seq_len
        return ToyOutput(last_hidden_state=self.proj(self.embed(input_ids)) * self._scales[seq_len])


__all__ = ["ToyModel", "ToyPreTrainedModel"]
