"""Cell ids: the JUnit grammar of docs/cells.md in both directions, and clear rejections."""

from __future__ import annotations

import pytest

from bot.cells import BACKENDS, TARGETS, Cell, CellIdError, cells_for, placed

ALL_CELLS = list(cells_for("LlamaForCausalLM", generative=True, backends=BACKENDS, targets=TARGETS))


def test_every_cell_kind_is_enumerated():
    kinds = {(c.backend, c.shape, c.path, c.cache, c.target) for c in ALL_CELLS}
    # 3 backends × 2 shapes × (forward + 2 caches) + xnnpack 2 × 3 + mlx 2 × 2 (no static cache).
    assert len(kinds) == len(ALL_CELLS) == 3 * 2 * 3 + 2 * 3 + 2 * 2


@pytest.mark.parametrize("cell", ALL_CELLS, ids=str)
def test_id_round_trip(cell):
    assert Cell.parse(cell.id) == cell
    assert Cell.from_testcase(cell.model_class, cell.name) == cell


@pytest.mark.parametrize(
    "cell_id, cell",
    [
        ("BertModel::test_onnx_export_dynamic", Cell("BertModel", "onnx", "dynamic")),
        ("BertModel::test_torch_export_static", Cell("BertModel", "dynamo", "static")),
        (
            "LlamaForCausalLM::test_torch_export_generate_static_static_cache",
            Cell("LlamaForCausalLM", "dynamo", "static", "generate", "static"),
        ),
        ("ViTModel::test_executorch_export_static_xnnpack", Cell("ViTModel", "executorch", "static", target="xnnpack")),
        (
            "GPT2LMHeadModel::test_executorch_export_generate_dynamic_xnnpack",
            Cell("GPT2LMHeadModel", "executorch", "dynamic", "generate", "dynamic", "xnnpack"),
        ),
        (
            "GPT2LMHeadModel::test_openvino_export_generate_dynamic",
            Cell("GPT2LMHeadModel", "openvino", "dynamic", "generate", "dynamic"),
        ),
    ],
)
def test_spec_examples(cell_id, cell):
    assert Cell.parse(cell_id) == cell
    assert cell.id == cell_id


@pytest.mark.parametrize(
    "cell_id, names",
    [
        ("BertModel", "no `::`"),
        ("tests.models.bert.BertModelTest::test_onnx_export_static", "tests.models.bert.BertModelTest"),
        ("::test_onnx_export_static", "classname"),
        ("BertModel::test_dynamo_export_static", "dynamo"),
        ("BertModel::test_onnx_forward", "test_onnx_forward"),
        ("BertModel::test_torch_exportable", "test_torch_exportable"),
        ("BertModel::test_aoti_export_static_static_cache", "_static_cache"),
        ("BertModel::test_aoti_export_sideways", "sideways"),
        ("BertModel::test_Precomputed", "test_Precomputed"),
        ("BertModel::test_precomputed inputs", "test_precomputed inputs"),
        ("BertModel::test_$(curl evil)", "curl"),
        ("BertModel::test_a;rm", "test_a;rm"),
        ("BertModel::test_onnx_export_wobbly", "wobbly"),
        ("BertModel::test_onnx_export_static_static_cache", "_static_cache"),
        ("BertModel::test_onnx_export_static_xnnpack", "xnnpack"),
        ("BertModel::test_executorch_export_static", "target None"),
        ("BertModel::test_executorch_export_static_coreml", "coreml"),
        ("GPT2LMHeadModel::test_executorch_export_generate_static_static_cache_mlx", "mlx"),
        ("BertModel::onnx_static", "onnx_static"),
        ("BertModel::", "''"),
    ],
)
def test_malformed_ids_name_the_bad_part(cell_id, names):
    with pytest.raises(CellIdError) as info:
        Cell.parse(cell_id)
    assert names in str(info.value)


def test_bad_fields_are_rejected_when_built_directly():
    with pytest.raises(CellIdError, match="unknown backend 'torch'"):
        Cell("BertModel", "torch")
    with pytest.raises(CellIdError, match="unknown backend 'Tensor RT'"):
        Cell("BertModel", "Tensor RT")
    with pytest.raises(CellIdError, match="only ExecuTorch cells have a target"):
        Cell("BertModel", "aoti", target="xnnpack")
    with pytest.raises(CellIdError, match="has no backend, shape"):
        Cell("BertModel", "", "", test="test_precomputed_inputs_match_eager", axes="x")
    with pytest.raises(CellIdError, match="needs a test name"):
        Cell("BertModel", "", "", test="test_onnx_export_static")
    with pytest.raises(CellIdError, match="forward cell has no cache"):
        Cell("BertModel", "onnx", cache="static")
    with pytest.raises(CellIdError, match="needs a cache"):
        Cell("GPT2LMHeadModel", "onnx", path="generate")


@pytest.mark.parametrize(
    ("cell_id", "backend", "shape", "path", "axes", "test"),
    [
        ("BertModel::test_aoti_export_static", "aoti", "static", "forward", "", ""),
        ("BertModel::test_tensorrt_export_dynamic", "tensorrt", "dynamic", "forward", "", ""),
        ("GPT2LMHeadModel::test_aoti_export_generate_static_static_cache", "aoti", "static", "generate", "", ""),
        (
            "GPT2LMHeadModel::test_aoti_export_generate_dynamic_multi_token",
            "aoti",
            "dynamic",
            "generate",
            "multi_token",
            "",
        ),
        (
            "BertModel::test_precomputed_inputs_match_eager",
            "",
            "",
            "forward",
            "",
            "test_precomputed_inputs_match_eager",
        ),
    ],
)
def test_a_name_the_bot_cannot_place_is_a_cell_with_what_it_could_read(cell_id, backend, shape, path, axes, test):
    cell = Cell.parse(cell_id)
    assert (cell.backend, cell.shape, cell.path, cell.axes, cell.test) == (backend, shape, path, axes, test)
    assert cell.id == cell_id and Cell.parse(cell.id) == cell
    assert cell.target is None and not placed(cell)


def test_known_cells_keep_their_ids_and_fields():
    for cell in cells_for("GPT2LMHeadModel", generative=True, targets=TARGETS):
        assert placed(cell) and cell.test == "" and Cell.parse(cell.id) == cell


# Every test name upstream's newest export module parameterizes (its `DYNAMIC_EXPORT_PARAMS`,
# `GENERATE_EXPORT_PARAMS`, `EXECUTORCH_EXPORT_PARAMS` and `EXECUTORCH_GENERATE_EXPORT_PARAMS`, with
# both ExecuTorch delegates registered), with the properties each expansion declares:
# (backend, shape, path, cache, target, axes).
_VARIANTS = [
    ("static", None, ""),
    ("static", "static", ""),
    ("dynamic", None, ""),
    ("dynamic", "static", ""),
    ("dynamic", None, "multi_token"),
    ("dynamic", "static", "multi_token"),
]


def _newest_module_names():
    rows = [("test_precomputed_inputs_match_eager", ("", "", "forward", None, None, ""))]
    for fn, backend in (("torch", "dynamo"), ("onnx", "onnx"), ("openvino", "openvino")):
        for shape in ("static", "dynamic"):
            rows.append((f"test_{fn}_export_{shape}", (backend, shape, "forward", None, None, "")))
        for shape, cache, axes in _VARIANTS:
            name = f"test_{fn}_export_generate_{shape}" + (f"_{axes}" if axes else "")
            name += "_static_cache" if cache else ""
            rows.append((name, (backend, shape, "generate", cache or "dynamic", None, axes)))
    for target in ("xnnpack", "mlx"):
        for shape in ("static", "dynamic"):
            rows.append(
                (f"test_executorch_export_{shape}_{target}", ("executorch", shape, "forward", None, target, ""))
            )
        for shape, cache, axes in _VARIANTS:
            if target == "mlx" and cache:  # MLX has no static cache
                continue
            name = f"test_executorch_export_generate_{shape}" + (f"_{axes}" if axes else "")
            name += ("_static_cache" if cache else "") + f"_{target}"
            rows.append((name, ("executorch", shape, "generate", cache or "dynamic", target, axes)))
    return rows


NEWEST_MODULE = _newest_module_names()


def test_the_newest_module_has_38_names():
    assert len(NEWEST_MODULE) == len({name for name, _ in NEWEST_MODULE}) == 38


@pytest.mark.parametrize(("name", "fields"), NEWEST_MODULE, ids=[name for name, _ in NEWEST_MODULE])
def test_every_name_of_the_newest_module_round_trips_with_its_declared_properties(name, fields):
    cell = Cell.from_testcase("LlamaForCausalLM", name)
    assert (cell.backend, cell.shape, cell.path, cell.cache, cell.target, cell.axes) == fields
    assert cell.name == name and Cell.parse(cell.id) == cell


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("test_torch_export_generate_dynamic_static_cache_multi_token", "comes after the other axes"),
        ("test_executorch_export_generate_dynamic_multi_token", "'token'"),
    ],
)
def test_a_misordered_name_is_refused_not_misread(name, says):
    with pytest.raises(CellIdError, match=says):
        Cell.parse(f"LlamaForCausalLM::{name}")


def test_a_collected_name_the_grammar_refuses_is_kept_verbatim_not_dropped():
    cell = Cell.from_testcase("BertModel", "test_onnx_export_sharded", lenient=True)
    assert cell.test == "test_onnx_export_sharded" and not placed(cell)
    assert Cell.from_testcase(cell.model_class, cell.name, lenient=True) == cell
    with pytest.raises(CellIdError):
        Cell.parse(cell.id)  # a person typing it still hears that it is no cell name
