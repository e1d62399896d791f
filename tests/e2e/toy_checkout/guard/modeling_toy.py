"""A tiny model for export-bot's end-to-end test (a PR adding a data-dependent branch to main's version)."""

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
        self.post_init()

    def forward(self, input_ids):
        # The PR's regression: a branch on a tensor's value. torch.export cannot guard on
        # `int(input_ids.max())`, so every export of this forward fails, static and dynamic.
        if int(input_ids.max()) < 0:
            input_ids = input_ids.abs()
        return ToyOutput(last_hidden_state=self.proj(self.embed(input_ids)))


__all__ = ["ToyModel", "ToyPreTrainedModel"]
