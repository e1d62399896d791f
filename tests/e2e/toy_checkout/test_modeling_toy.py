"""Toy checkout: a tester in upstream's shape for the toy model, loaded from this checkout's source by file path."""

import importlib.util
import sys
import unittest
from pathlib import Path

from ...test_modeling_common import ModelTesterMixin, ids_tensor

# `transformers` resolves to the installed package, which has no toy model: load the checkout's own file.
_MODELING = Path(__file__).resolve().parents[3] / "src" / "transformers" / "models" / "toy" / "modeling_toy.py"


def _load_modeling():
    spec = importlib.util.spec_from_file_location("toy_checkout_modeling_toy", _MODELING)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # inspect.getfile (the runner's MoE gate) looks the module up here
    spec.loader.exec_module(module)
    return module


modeling_toy = _load_modeling()


class ToyModelTester:
    def __init__(self, parent, batch_size=2, seq_length=7, vocab_size=32, hidden_size=8):
        self.parent = parent
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size

    def get_config(self):
        return modeling_toy.ToyConfig(vocab_size=self.vocab_size, hidden_size=self.hidden_size)

    def prepare_config_and_inputs_for_common(self):
        input_ids = ids_tensor([self.batch_size, self.seq_length], self.vocab_size)
        return self.get_config(), {"input_ids": input_ids}


class ToyModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (modeling_toy.ToyModel,)

    def setUp(self):
        self.model_tester = ToyModelTester(self)
