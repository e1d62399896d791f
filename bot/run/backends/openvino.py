"""OpenVINO: export with `OpenVINOExporter`, compile and infer with folded state seeded (`_run_openvino_model`)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import openvino
import torch
from transformers import set_seed
from transformers.exporters.exporter_openvino import OpenVINOConfig, OpenVINOExporter

# The seed imports it from `quantizers.utils`; the installed release keeps it in `utils`.
from transformers.exporters.utils import get_leaf_tensors, openvino_feed


def export(
    model: torch.nn.Module, inputs: dict, *, dynamic: bool, target: str | None = None, optimize: bool | None = None
) -> Any:
    program, _metadata = OpenVINOExporter().export_program(model, inputs, config=OpenVINOConfig(dynamic=dynamic))
    return program


def _state_path(state: Any) -> str:
    # A folded variable is named `input.<path>output.<path>`: recover `<path>`.
    name = state.name
    return name[len("input.") : (len(name) - len("input.output.")) // 2 + len("input.")]


def run(program: Any, inputs: dict) -> dict[str, torch.Tensor]:
    """Outputs by port name, plus the folded state read back, so the dict covers the leaves eager returns.

    `ExportedModel.__call__` cannot run a stateful decode component (its graph keeps only
    `input_ids`, `position_ids`, `beam_idx`), so the state variables are seeded here from the
    sample cache leaves; they would otherwise read zeros on the first infer.
    """
    set_seed(1234)
    # f32 pinned: on CPUs with AMX or AVX512-BF16 the CPU plugin's default inference precision
    # is bf16, which judges the machine rather than the export (tiny ViTs miss 1e-3 by 10 %).
    compiled = openvino.compile_model(program, "AUTO", {"INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    leaves = {path: tensor.detach().cpu() for path, tensor in get_leaf_tensors(inputs).items()}
    feed = openvino_feed(program, inputs)
    for state in request.query_state():
        path = _state_path(state)
        if path in leaves:
            # The exporter may retype state (i64 lengths to i32): cast to the variable's dtype.
            value = leaves[path].numpy().astype(state.state.data.dtype, copy=False)
            state.state = openvino.Tensor(value)
    results = request.infer(feed)
    outputs = {}
    for port in compiled.outputs:
        # Compilation may merge a named output with an intermediate that kept its numeric id:
        # prefer the readable alias over `get_any_name`'s sorted-first.
        names = sorted(port.get_names())
        name = next((n for n in names if not n.isdigit()), names[0])
        outputs[re.sub(r"^output\.", "", name)] = torch.as_tensor(results[port])
    for state in request.query_state():
        outputs[_state_path(state)] = torch.as_tensor(state.state.data.copy())
    return outputs


def measure(program: Any) -> dict[str, float]:
    """The OpenVINO IR's size on disk (the .xml and the .bin `save_model` writes, uncompressed) and its op count."""
    with tempfile.TemporaryDirectory(prefix="export-bot-ir-") as folder:
        path = Path(folder) / "model.xml"
        openvino.save_model(program, path, compress_to_fp16=False)
        size = sum(file.stat().st_size for file in Path(folder).iterdir())
    return {"artifact_bytes": float(size), "openvino_ops": float(len(program.get_ordered_ops()))}
