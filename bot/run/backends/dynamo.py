"""torch.export: export with `DynamoExporter`, run the program's module in-process (the seed's `test_torch_export`)."""

from __future__ import annotations

import copy
from typing import Any

import torch
from transformers import set_seed
from transformers.exporters.exporter_dynamo import DynamoConfig, DynamoExporter
from transformers.exporters.utils import get_leaf_tensors


def export(
    model: torch.nn.Module, inputs: dict, *, dynamic: bool, target: str | None = None, optimize: bool | None = None
) -> Any:
    program, _metadata = DynamoExporter().export_program(model, inputs, config=DynamoConfig(dynamic=dynamic))
    return program


def run(program: Any, inputs: dict) -> dict[str, torch.Tensor]:
    with torch.no_grad():
        set_seed(1234)
        return get_leaf_tensors(program.module()(**copy.deepcopy(inputs)))
