"""CellRequest: source classes + options → cells, unknown classes kept as build errors, bad options named."""

from __future__ import annotations

import pytest

from bot.models.sources.base import ClassInfo
from bot.run.selection import CellRequest, SelectionError, requested_cells, split_names

CLASSES = [
    ClassInfo("BertModel", "bert", False, "text-encoder"),
    ClassInfo("LlamaForCausalLM", "llama", True, "decoder"),
    ClassInfo("ViTModel", "vit", False, "vision"),
]
PRESETS = {
    "smoke": ("BertModel", "LlamaForCausalLM"),
    "core": ("ViTModel",),
    "all": ("BertModel", "LlamaForCausalLM", "ViTModel"),
}


def ids(cells):
    return [cell.id for cell in cells]


def test_default_is_the_smoke_preset_with_every_backend_shape_and_path():
    cells = requested_cells(CellRequest(), CLASSES, PRESETS)
    bert = [c for c in cells if c.model_class == "BertModel"]
    llama = [c for c in cells if c.model_class == "LlamaForCausalLM"]
    assert len(bert) == 8  # 4 backends × 2 shapes, forward only
    assert {c.path for c in llama} == {"forward", "generate"}
    assert {(c.cache, c.shape) for c in llama if c.generate} == {
        (cache, shape) for cache in ("dynamic", "static") for shape in ("static", "dynamic")
    }
    assert len(llama) == 8 + 16
    assert {c.backend for c in cells} == {"dynamo", "onnx", "openvino", "executorch"}
    assert len(set(cells)) == len(cells)


def test_filters_narrow_the_matrix_and_no_generate_drops_the_generate_path():
    selection = CellRequest(models=("LlamaForCausalLM",), backends=("onnx",), shapes=("dynamic",), generate=False)
    assert ids(requested_cells(selection, CLASSES, PRESETS)) == ["LlamaForCausalLM::test_onnx_export_dynamic"]


def test_models_add_to_a_preset_in_order_without_duplicates():
    cells = requested_cells(
        CellRequest(
            models=("ViTModel", "BertModel"), preset="smoke", backends=("dynamo",), shapes=("static",), generate=False
        ),
        CLASSES,
        PRESETS,
    )
    assert ids(cells) == [
        "BertModel::test_torch_export_static",
        "LlamaForCausalLM::test_torch_export_static",
        "ViTModel::test_torch_export_static",
    ]


def test_a_class_the_source_lacks_still_yields_cells():
    cells = requested_cells(CellRequest(models=("GhostModel",), backends=("dynamo", "executorch")), CLASSES, PRESETS)
    assert ids(cells) == [
        "GhostModel::test_torch_export_static",
        "GhostModel::test_torch_export_dynamic",
        "GhostModel::test_executorch_export_static_xnnpack",
        "GhostModel::test_executorch_export_dynamic_xnnpack",
    ]


def test_mlx_target_adds_executorch_cells_but_no_static_cache_ones():
    cells = requested_cells(
        CellRequest(models=("LlamaForCausalLM",), backends=("executorch",), targets=("xnnpack", "mlx")),
        CLASSES,
        PRESETS,
    )
    mlx = [c for c in cells if c.target == "mlx"]
    assert mlx and not any(c.static_cache for c in mlx)
    assert len([c for c in cells if c.target == "xnnpack"]) == 2 + 4


@pytest.mark.parametrize(
    "selection, words",
    [
        (CellRequest(preset="nightly"), ["--preset", "'nightly'", "smoke, core, all"]),
        (CellRequest(backends=("tflite",)), ["--backends", "'tflite'", "dynamo, onnx, openvino, executorch"]),
        (CellRequest(shapes=("ragged",)), ["--shapes", "'ragged'"]),
        (CellRequest(backends=()), ["--backends", "at least one"]),
    ],
)
def test_bad_options_are_named_with_the_choices(selection, words):
    with pytest.raises(SelectionError) as error:
        requested_cells(selection, CLASSES, PRESETS)
    for word in words:
        assert word in str(error.value)


def test_split_names_accepts_repeats_and_comma_lists():
    assert split_names(["onnx,dynamo", " onnx", "executorch,"]) == ("onnx", "dynamo", "executorch")


def test_executorch_targets_are_asked_once_per_installed_build(tmp_path, monkeypatch):
    import importlib.util

    from bot.run import selection

    if importlib.util.find_spec("executorch.backends.mlx") is None:
        pytest.skip("the registry is only asked when the MLX package is installed")
    first = selection.executorch_targets(tmp_path)
    assert first[0] == "xnnpack"
    (cached,) = tmp_path.iterdir()
    assert cached.read_text().split() == list(first)
    # A second call answers from the cache: it never reaches the runtime.
    monkeypatch.setitem(__import__("sys").modules, "executorch.runtime", None)
    assert selection.executorch_targets(tmp_path) == first
