"""Sharding: disjoint, covering, deterministic, balanced; durations read back from an earlier JUnit."""

from __future__ import annotations

import random

import pytest

from bot.cells import Cell, cells_for
from bot.run.shard import ShardError, assign_shards, estimate, parse_shard, read_durations, select_shard


def matrix(count: int) -> list[Cell]:
    cells: list[Cell] = []
    for i in range(count):
        cells.extend(cells_for(f"Model{i}Model", generative=i % 3 == 0))
    return cells


def synthetic(cells: list[Cell], seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    # Long-tailed like the real matrix: most cells take seconds, a few take minutes.
    return {cell.id: rng.lognormvariate(2.0, 1.0) for cell in cells}


@pytest.mark.parametrize("count", [1, 2, 3, 8, 32])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shards_are_disjoint_covering_and_balanced(count, seed):
    cells = matrix(40)
    durations = synthetic(cells, seed)
    shards = assign_shards(cells, count, durations)
    assert len(shards) == count
    flat = [cell for shard in shards for cell in shard]
    assert len(flat) == len(set(flat)) == len(cells)
    assert set(flat) == set(cells)
    loads = [sum(durations[c.id] for c in shard) for shard in shards]
    ideal = sum(durations.values()) / count
    longest = max(durations.values())
    assert max(loads) <= 1.05 * max(ideal, longest)


def test_shards_do_not_depend_on_input_order():
    cells = matrix(12)
    durations = synthetic(cells, 7)
    shuffled = list(cells)
    random.Random(3).shuffle(shuffled)
    assert assign_shards(cells, 4, durations) == assign_shards(shuffled, 4, durations)
    assert assign_shards(cells, 4) == assign_shards(list(reversed(cells)), 4)


def test_select_shard_picks_the_one_based_part():
    cells = matrix(6)
    parts = assign_shards(cells, 3)
    assert [select_shard(cells, (i, 3)) for i in (1, 2, 3)] == parts


def test_more_shards_than_cells_leaves_some_empty():
    cells = matrix(1)[:2]
    shards = assign_shards(cells, 5)
    assert sorted(len(s) for s in shards) == [0, 0, 0, 1, 1]


def test_estimates_fall_back_to_the_backend_default():
    forward = Cell("BertModel", "executorch", target="xnnpack")
    generate = Cell("LlamaForCausalLM", "executorch", path="generate", cache="dynamic", target="xnnpack")
    assert estimate(generate) == 2 * estimate(forward)
    assert estimate(forward, {forward.id: 1.5}) == 1.5
    assert estimate(Cell("BertModel", "dynamo")) < estimate(forward)


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2", "²/3", "1/٣"])
def test_bad_shard_specs_are_rejected(text):
    with pytest.raises(ShardError, match="I/N"):
        parse_shard(text)


def test_parse_shard():
    assert parse_shard("2/8") == (2, 8)


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="export-bot">
<testcase classname="BertModel" name="test_onnx_export_static" time="12.5"/>
<testcase classname="BertModel" name="test_onnx_export_static" time="14.0"/>
<testcase classname="tests.models.bert.test_modeling_bert.BertModelTest" name="test_attention" time="3"/>
<testcase classname="LlamaForCausalLM" name="test_torch_export_generate_dynamic_static_cache" time="40.25"><skipped/></testcase>
<testcase classname="ViTModel" name="test_torch_export_static"/>
</testsuite><testsuite><testcase classname="ViTModel" name="test_openvino_export_dynamic" time="7"/></testsuite></testsuites>
"""


def test_read_durations_keeps_cells_only_and_the_longest_repeat(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    assert read_durations(path) == {
        "BertModel::test_onnx_export_static": 14.0,
        "LlamaForCausalLM::test_torch_export_generate_dynamic_static_cache": 40.25,
        "ViTModel::test_openvino_export_dynamic": 7.0,
    }


def test_read_durations_names_the_broken_file(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<testsuites><testcase")
    with pytest.raises(ShardError, match=r"broken.xml:1:\d+"):
        read_durations(path)
    with pytest.raises(ShardError, match="no such file"):
        read_durations(tmp_path / "missing.xml")
