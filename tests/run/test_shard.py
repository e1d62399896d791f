"""Sharding: disjoint, covering, deterministic, balanced; durations read back from an earlier JUnit."""

from __future__ import annotations

import random

import pytest

from bot.cells import Cell, cells_for
from bot.run import shard
from bot.run.shard import (
    ShardError,
    assign_shards,
    estimate,
    parse_shard,
    read_durations,
    recorded_seconds,
    select_shard,
    timing_key,
)


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


def test_estimates_fall_back_to_the_recorded_time_of_the_cells_group():
    forward = Cell("BertModel", "executorch", target="xnnpack")
    generate = Cell("LlamaForCausalLM", "executorch", path="generate", cache="dynamic", target="xnnpack")
    recorded = recorded_seconds()
    assert estimate(forward) == recorded["executorch/forward/static"]
    assert estimate(generate) == recorded["executorch/generate/dynamic/static"]
    assert estimate(forward, {forward.id: 1.5}) == 1.5
    # The sweep's sample measured ExecuTorch (XNNPACK lowering) slower than dynamo.
    assert estimate(Cell("BertModel", "dynamo")) < estimate(forward)


def test_a_group_never_measured_costs_its_backends_mean(monkeypatch):
    static_cache = Cell("LlamaForCausalLM", "onnx", path="generate", cache="static", shape="dynamic")
    recorded = {"onnx/forward/static": 2.0, "onnx/forward/dynamic": 4.0, "dynamo/forward/static": 100.0}
    monkeypatch.setattr(shard, "recorded_seconds", lambda: recorded)
    assert estimate(static_cache) == 3.0
    assert estimate(Cell("BertModel", "openvino")) == pytest.approx(106 / 3)  # no openvino group: the mean of all


def test_recorded_times_cover_every_backend_path_and_shape_of_the_default_matrix():
    """The file `benchmarks/sweep.py project --write` records: every group the zoo's cells fall in."""
    groups = {timing_key(cell) for cell in cells_for("LlamaForCausalLM", generative=True)}
    assert groups <= set(recorded_seconds()), groups - set(recorded_seconds())
    assert all(seconds > 0 for seconds in recorded_seconds().values())


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


def test_read_durations_of_a_folder_reads_every_shard_file(tmp_path):
    """A baseline artifact arrives as one JUnit per shard: --durations takes the folder."""
    (tmp_path / "baseline-1.xml").write_text(JUNIT)
    (tmp_path / "baseline-2.xml").write_text(
        '<testsuite><testcase classname="BertModel" name="test_onnx_export_static" time="20"/>'
        '<testcase classname="BertModel" name="test_torch_export_static" time="1.5"/></testsuite>'
    )
    (tmp_path / "report.json").write_text("{}")  # the rest of the artifact is not read
    found = read_durations(tmp_path)
    assert found["BertModel::test_onnx_export_static"] == 20.0  # the longest of the two shards
    assert found["BertModel::test_torch_export_static"] == 1.5
    assert found["ViTModel::test_openvino_export_dynamic"] == 7.0
    assert read_durations(tmp_path / "baseline-2.xml").keys() < found.keys()


def test_the_shard_count_follows_the_selections_cost_within_the_cap():
    from bot.cells import BACKENDS, TARGETS, cells_for
    from bot.run.shard import SHARD_WORKERS, estimate, shard_count

    one_model = list(cells_for("BertModel", generative=False))
    assert shard_count(one_model, None, cap=32, budget_seconds=40 * 60) == 1
    many = [c for i in range(400) for c in cells_for(f"Model{i}", generative=True, backends=BACKENDS, targets=TARGETS)]
    cost = sum(estimate(c) for c in many) / SHARD_WORKERS
    sized = shard_count(many, None, cap=1000, budget_seconds=40 * 60)
    assert sized == -(-cost // (40 * 60)) and sized > 1  # each shard's estimate is under the budget
    assert shard_count(many, None, cap=8, budget_seconds=40 * 60) == 8  # the cap holds
    assert shard_count(one_model, None, cap=4, budget_seconds=None) == 4  # no budget: the cap, as before
    assert shard_count([], None, cap=4, budget_seconds=60) == 0
    durations = {one_model[0].id: 10 * 3600.0}  # a measured time wins over the recorded one
    assert shard_count(one_model[:2], durations, cap=32, budget_seconds=40 * 60) == 2
