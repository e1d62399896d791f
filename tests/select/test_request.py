"""`/export-check` requests that name cells: models (classes or types), full, and the git-selection kinds."""

from __future__ import annotations

import json

import pytest

from bot.cells import Cell
from bot.models.index import ModelIndex
from bot.select.catalog import Catalog
from bot.select.request import RequestError, RunRequest, parse_request, request_cells

INDEX = ModelIndex({"llama": ("LlamaModel", "LlamaForCausalLM"), "bert": ("BertModel",)})
CATALOG = Catalog(
    {"LlamaForCausalLM": True, "LlamaModel": False, "BertModel": False},
    frozenset({"LlamaForCausalLM", "LlamaModel", "BertModel"}),
    core=("BertModel",),
)


@pytest.mark.parametrize("text", [None, "", "{}", '{"kind": "rerun"}'])
def test_no_request_or_a_plain_rerun_uses_the_git_selection(text):
    request = parse_request(text)
    assert request.uses_git and not request.probe


def test_probe_uses_the_git_selection_and_probes():
    request = parse_request('{"kind": "probe", "pr": 3}')
    assert request.uses_git and request.probe


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"kind": "apply"}',
        '["models"]',
        '{"kind": "models", "models": 5}',
        '{"kind": "models", "models": "BertModel"}',
        '{"kind": "models", "models": ["BertModel"], "backends": [1]}',
    ],
)
def test_a_request_that_names_no_run_is_refused(text):
    with pytest.raises(RequestError):
        parse_request(text)


def test_a_model_type_stands_for_its_classes_and_generate_is_opt_in():
    request = RunRequest("models", models=("llama",), backends=("onnx",), shapes=("dynamic",))
    cells = request_cells(request, CATALOG, INDEX)
    assert [c.id for c in cells] == [
        "LlamaModel::test_onnx_export_dynamic",
        "LlamaForCausalLM::test_onnx_export_dynamic",
    ]
    with_generate = request_cells(
        RunRequest("models", models=("LlamaForCausalLM",), backends=("onnx",), shapes=("dynamic",), generate=True),
        CATALOG,
        INDEX,
    )
    assert Cell.parse("LlamaForCausalLM::test_onnx_export_generate_dynamic_static_cache") in with_generate


def test_full_runs_every_buildable_class():
    cells = request_cells(parse_request(json.dumps({"kind": "full"})), CATALOG, INDEX)
    assert {c.model_class for c in cells} == {"BertModel", "LlamaModel", "LlamaForCausalLM"}
    assert len(cells) == 8 + 8 + 24


def test_a_failed_request_runs_exactly_its_cells():
    ids = ["BertModel::test_onnx_export_static", "LlamaForCausalLM::test_torch_export_generate_dynamic_static_cache"]
    request = parse_request(json.dumps({"kind": "failed", "cells": ids, "pr": 3}))
    assert not request.uses_git and not request.probe
    assert [c.id for c in request_cells(request, CATALOG, INDEX)] == ids


@pytest.mark.parametrize(
    "cells",
    [
        [],
        ["Bert; rm -rf /"],
        ["BertModel::test_onnx_export_static\nexit 1"],
        ["A" * 10_000 + "::test_onnx_export_static"],
        ["BertModel::test_onnx_export_static"] * 1_001,
        "BertModel::test_onnx_export_static",
        [7],
    ],
)
def test_a_failed_request_whose_cells_are_not_cells_is_refused(cells):
    with pytest.raises(RequestError) as caught:
        parse_request(json.dumps({"kind": "failed", "cells": cells}))
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400
