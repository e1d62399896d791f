"""Each backend module round-trips a tiny Llama's generate decode component (KV cache in, KV cache out) on its runtime."""

from __future__ import annotations

import copy

import pytest
import torch

from bot.cells import BACKENDS
from bot.run.backends import load_backend
from bot.run.judge import check_outputs_close

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def decode():
    """The decode stage of a tiny Llama's `generate()`, as the seed captures it, with eager's leaves."""
    from transformers import LlamaForCausalLM, set_seed
    from transformers.exporters.utils import decompose_for_generation, get_leaf_tensors

    from tests.run.test_execute import tiny_llama

    config = tiny_llama().config
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    inputs = {"input_ids": torch.randint(1, 99, (2, 7)), "attention_mask": torch.ones(2, 7, dtype=torch.long)}
    model, decode_inputs = decompose_for_generation(model, inputs)["decode"]
    with torch.no_grad():
        set_seed(1234)
        eager = get_leaf_tensors(model(**copy.deepcopy(decode_inputs)))
    assert any(name.startswith("past_key_values.") for name in get_leaf_tensors(decode_inputs))
    return model, decode_inputs, eager

    return get_leaf_tensors(inputs)


@pytest.mark.parametrize("name", BACKENDS)
def test_decode_component_round_trips(decode, name):
    model, inputs, eager = decode
    backend = load_backend(name)
    program = backend.export(
        model, inputs, dynamic=False, target="xnnpack" if name == "executorch" else None, optimize=True
    )
    outputs = backend.run(program, inputs)
    if name == "executorch":
        # Unnamed, USER_OUTPUTs only (the mutated-input outputs dropped): logits first, then the cache.
        assert len(outputs) == len(eager)
        logits = outputs[0]
    else:
        # OpenVINO folds the cache into state variables: read back, they carry eager's names, and
        # their values (past and new positions) show the state was seeded from the sample cache.
        assert set(outputs) == set(eager)
        check_outputs_close(outputs, eager, atol=1e-3, rtol=1e-3, check_device=False)
        logits = outputs["logits"]
    check_outputs_close({"logits": logits}, {"logits": eager["logits"]}, atol=1e-3, rtol=1e-3, check_device=False)
