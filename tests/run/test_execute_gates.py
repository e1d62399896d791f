"""Environment gates as pure decisions: torch version, exportability, eager MoE, static cache."""

from __future__ import annotations

import sys

import pytest

from bot.cells import Cell
from bot.run.gates import has_eager_moe, model_gate, torch_gate

# Spelled in two parts so this file itself does not read as an eager-MoE modeling file.
LOOP = "for " + "expert"


@pytest.mark.parametrize(
    ("installed", "minimum", "gated"),
    [
        ("2.13.0+cpu", "2.11.0", False),
        ("2.11.0", "2.11.0", False),
        ("2.11.0.dev20250101", "2.11.0", True),  # upstream: a dev build sorts below its release
        ("2.10.1", "2.11.0", True),
    ],
)
def test_torch_gate(installed, minimum, gated):
    gate = torch_gate(installed, minimum)
    assert (gate is not None) is gated
    if gate:
        assert gate.scope == "env:torch-too-old" and minimum in gate.reason


@pytest.mark.parametrize(
    ("source", "moe"),
    [
        (f"{LOOP} in self.experts:\n    ...", True),
        (f"@use_experts_implementation\n{LOOP} in range(8):", False),
        ("for layer in self.layers:", False),
    ],
)
def test_eager_moe(source, moe):
    assert has_eager_moe(source) is moe


class Plain:
    _can_compile_fullgraph = True


class NoFullgraph:
    _can_compile_fullgraph = False


def test_model_gate_order_and_scopes():
    forward = Cell("Plain", "onnx")
    static_cache = Cell("NoFullgraph", "dynamo", "static", "generate", "static")
    assert model_gate(forward, Plain, exportable=True) is None
    assert model_gate(forward, Plain, exportable=False).scope == "env:not-exportable"
    assert model_gate(static_cache, NoFullgraph, exportable=True).scope == "env:static-cache-unsupported"
    assert (
        model_gate(Cell("NoFullgraph", "dynamo", "static", "generate", "dynamic"), NoFullgraph, exportable=True) is None
    )


def test_model_gate_reads_the_modeling_file(tmp_path, monkeypatch):
    import importlib.util

    path = tmp_path / "modeling_fake.py"
    path.write_text(f"class FakeMoe:\n    def forward(self):\n        {LOOP} in self.experts:\n            pass\n")
    spec = importlib.util.spec_from_file_location("modeling_fake", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "modeling_fake", module)  # where inspect.getfile looks a class's file up
    spec.loader.exec_module(module)
    gate = model_gate(Cell("FakeMoe", "dynamo"), module.FakeMoe, exportable=True)
    assert gate.scope == "env:eager-moe"
