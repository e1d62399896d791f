"""ONNX: export with `OnnxExporter` (optimize toggle from the skiplists), run on ONNX Runtime (`_run_onnx_program`)."""

from __future__ import annotations

import re
from typing import Any

import onnx_ir
import onnxruntime
import torch
from transformers import set_seed
from transformers.exporters.exporter_onnx import OnnxConfig, OnnxExporter
from transformers.exporters.utils import onnx_feed


def export(
    model: torch.nn.Module, inputs: dict, *, dynamic: bool, target: str | None = None, optimize: bool | None = None
) -> Any:
    config = OnnxConfig(dynamic=dynamic, optimize=True if optimize is None else optimize)
    program, _metadata = OnnxExporter().export_program(model, inputs, config=config)
    return program


def run(program: Any, inputs: dict) -> dict[str, torch.Tensor]:
    """Outputs by graph output name, as CPU tensors whatever device eager ran on (compared with `check_device=False`).

    The installed exporter returns an `onnx_ir.Model`, not the seed's `ONNXProgram`: open a CPU
    session on it and feed the tensor leaves by input name, as `ONNXProgram.__call__` did.
    """
    set_seed(1234)
    session = onnxruntime.InferenceSession(
        onnx_ir.to_proto(program).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    feed = onnx_feed([spec.name for spec in session.get_inputs()], inputs)
    values = session.run(None, feed)
    names = (re.sub(r"^output\.", "", spec.name) for spec in session.get_outputs())
    return {name: torch.as_tensor(value) for name, value in zip(names, values)}


def measure(program: Any) -> dict[str, float]:
    """The ONNX model's size as serialized and its graph's node count (functions' bodies not counted)."""
    proto = onnx_ir.to_proto(program)
    return {"artifact_bytes": float(proto.ByteSize()), "onnx_nodes": float(len(proto.graph.node))}
