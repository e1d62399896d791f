"""Footprints in main's baseline (docs/baseline.md): read from a run's JUnit, kept per cell through folds, stored as tables."""

from __future__ import annotations

import json

import pytest

from bot.footprints import encode
from bot.results import read_results
from bot.results.baseline import fold, measured
from bot.results.baseline_json import BaselineError, dumps, loads
from tests.github.test_baseline import measurement
from tests.results.factory import Case, junit

A, B, C = "a" * 40, "b" * 40, "c" * 40
BERT = "BertModel::test_onnx_export_static"
LLAMA = "LlamaModel::test_onnx_export_static"
SEEN = frozenset(
    {"src/transformers/models/bert/modeling_bert.py::BertModel.forward", "src/transformers/a.py::<module>"}
)


def run(tmp_path, commit: str, parent: str | None, run_id: int, footprints: dict[str, frozenset[str]], name: str):
    """One push's measurement from real JUnit text; cells in `footprints` carry the property."""
    cases = [
        Case(cell, extra={"footprint": encode(footprints[cell])} if cell in footprints else {})
        for cell in (BERT, LLAMA)
    ]
    (folder := tmp_path / name).mkdir()
    return measurement(folder, cases, commit=commit, parent=parent, run_id=run_id, time=f"2026-12-0{run_id}T00:00:00Z")


def test_a_footprint_travels_from_the_junit_into_the_state_and_round_trips(tmp_path):
    state = run(tmp_path, A, None, 1, {BERT: SEEN}, "sweep")
    assert state.footprints[next(c for c in state.cells if c.id == BERT)].functions == SEEN
    assert all(not any(k == "footprint" for k, _ in ms[0].result.properties) for ms in state.cells.values())
    text = dumps(state)
    document = json.loads(text)
    assert document["version"] == 3 and document["functions"] == {
        "src/transformers/a.py": ["<module>"],
        "src/transformers/models/bert/modeling_bert.py": ["BertModel.forward"],
    }
    again = loads(text, where="baseline.json")
    assert again == state and again.footprints == state.footprints


def test_a_run_without_footprints_keeps_the_last_recorded_and_a_newer_one_replaces_it(tmp_path):
    sweep = run(tmp_path, A, None, 1, {BERT: SEEN, LLAMA: SEEN}, "sweep")
    newer = frozenset({"src/transformers/a.py::f"})
    push = run(tmp_path, B, A, 2, {LLAMA: newer}, "push")  # a PR-like run: Bert's footprint not recorded
    bare = run(tmp_path, C, B, 3, {}, "bare")
    for state in (fold(sweep, push, bare), fold(bare, push, sweep), loads(dumps(fold(sweep, push, bare)), where="x")):
        kept = {cell.id: (f.commit, f.functions) for cell, f in state.footprints.items()}
        assert kept == {BERT: (A, SEEN), LLAMA: (B, newer)}
    # Kept even when the cell's measurements that recorded it fall out of the history.
    assert fold(sweep, push, bare, keep=1).footprints == fold(sweep, push, bare).footprints


def test_a_version_2_state_reads_without_footprints_and_hostile_tables_are_refused(tmp_path):
    document = json.loads(dumps(run(tmp_path, A, None, 1, {BERT: SEEN}, "sweep")))
    v2 = {k: v for k, v in document.items() if k not in ("functions", "groups", "shared_groups", "footprints")}
    assert loads(json.dumps({**v2, "version": 2}), where="v2").footprints == {}
    for field, value in [
        ("functions", {"../../etc/x.py": ["f"]}),
        ("groups", [[5]]),
        ("footprints", {BERT: {"at": 9, "groups": []}}),
    ]:
        with pytest.raises(BaselineError, match="footprints"):
            loads(json.dumps({**document, field: value}), where="baseline.json")


def test_a_hostile_property_is_not_kept_and_the_measurement_still_is(tmp_path, caplog):
    path = tmp_path / "fork.xml"
    path.write_text(junit([Case(BERT, extra={"footprint": "zlib:" + "A" * 100})]))
    state = measured(read_results([path]), commit=A, time="2026-12-01T00:00:00Z", run_id=1, source="push", segment=None)
    assert state.footprints == {} and len(state.cells) == 1
    assert "footprint not kept" in caplog.text


def test_the_footprint_tables_stay_small_when_cells_share_their_code():
    """1,000 cells of 50 models × 20 variants, each 600 functions (500 shared library code, 100 its model's)."""
    from bot.cells import Cell
    from bot.results.baseline import Baseline, Footprint

    library = [f"src/transformers/lib{i // 20}.py::f{i}" for i in range(500)]
    footprints = {}
    for model in range(50):
        own = [f"src/transformers/models/m{model}/modeling_m{model}.py::C.f{i}" for i in range(100)]
        for variant, name in enumerate(f"test_onnx_export_{s}" for s in ("static", "dynamic")):
            for extra in range(10):
                cell = Cell.parse(f"M{model}x{extra}::{name}")
                footprints[cell] = Footprint(
                    A, "2026-12-01T00:00:00Z", 1, "sweep", frozenset(library + own[: 90 + variant])
                )
    document = json.loads(dumps(Baseline(footprints=footprints)))
    names = len(json.dumps(document["functions"]))  # each of the 5,500 functions once
    rest = len(json.dumps({k: document[k] for k in ("groups", "shared_groups", "footprints")}))
    assert rest < 150 * len(footprints)  # bytes per cell, its id included,, against ~30,000 for its names spelled out
    assert names < 60 * 5_500
