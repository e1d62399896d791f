"""baseline.json (bot/results/baseline_json.py): version 2 round-trips, version 1 is converted, anything else is refused."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cells import Cell
from bot.results import read_results
from bot.results.baseline import MESSAGE_LIMIT, Segment, fold, measured
from bot.results.baseline_json import BaselineError, dumps, durations, from_junit_folder, loads, read_state
from tests.results.factory import Case, junit

SAMPLE = Path(__file__).parent / "data" / "runner_sample.xml"  # real runner output
SAMPLE_SHA = "f11145ae0d5f0ac097439f1a3f30acc7a6e58eee"
A, B = "a" * 40, "b" * 40


def state_of(tmp_path) -> str:
    """A two-run state from real JUnit: the sample sweep (a failure, a build error, a skip), then a push whose confirming re-run disagreed."""
    head = tmp_path / "head.xml"
    head.write_text(junit([Case("BertModel::test_onnx_export_static", status="failed", message="x" * 2000)]))
    rerun = tmp_path / "rerun.xml"
    rerun.write_text(junit([Case("BertModel::test_onnx_export_static")]))
    sweep = measured(
        read_results([SAMPLE]),
        commit=A,
        time="2026-11-29T19:58:52+00:00",
        run_id=7,
        source="sweep",
        segment=Segment(None, (A,), 7),
        full=True,
    )
    push = measured(
        read_results([head]),
        commit=B,
        time="2026-11-30T08:00:00Z",
        run_id=8,
        source="push",
        segment=Segment(A, (B,), 8),
        rerun=read_results([rerun]),
        due=("shared: src/transformers/cache_utils.py",),
    )
    return dumps(fold(sweep, push))


def test_a_state_round_trips_and_keeps_only_what_the_diff_reads(tmp_path):
    text = state_of(tmp_path)
    state = loads(text, where="baseline.json")
    assert dumps(state) == text
    document = json.loads(text)
    assert (document["format"], document["version"]) == ("export-bot-baseline", 3)
    assert {"commit": A, "time": "2026-11-29T19:58:52Z", "run_id": 7, "source": "sweep"} in document["measured"]
    assert len(document["measured"]) == 2  # each run's (commit, time, run, source) once
    bert = state.cells[Cell.parse("BertModel::test_onnx_export_static")][0]
    assert bert.flipped and len(bert.result.message) == MESSAGE_LIMIT and bert.result.details == ""
    build = state.cells[Cell.parse("GhostModel::test_torch_export_static")][0].result
    assert (build.status.value, build.kind, build.stage) == ("error", "build", "build") and not build.infrastructure
    hanging = state.cells[Cell.parse("HangingModel::test_torch_export_static")][0].result
    assert (hanging.status.value, hanging.stage, hanging.message) == ("failed", "eager", "AssertionError")
    assert state.due == ((B, "shared: src/transformers/cache_utils.py"),)
    assert durations(state)[hanging.cell.id] == 60.003


def test_a_version_1_folder_of_junit_is_converted_at_its_suites_commit(tmp_path, caplog):
    folder = tmp_path / "base"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "baseline-1.xml")
    with caplog.at_level(logging.WARNING):
        state = read_state(folder)
    assert "version-1 baseline" in caplog.text
    assert {m.commit for ms in state.cells.values() for m in ms} == {SAMPLE_SHA}
    assert {m.source for ms in state.cells.values() for m in ms} == {"sweep"}
    assert state.full_sweeps[0][0] == SAMPLE_SHA and len(state.cells) == len(read_results([SAMPLE]).results)
    with pytest.raises(BaselineError, match="name no one commit"):
        from_junit_folder(read_results([SAMPLE]), commit="abc123", time="2026-01-01T00:00:00Z")


def test_a_folder_of_states_is_folded_and_an_empty_one_is_no_baseline_yet(tmp_path):
    text = state_of(tmp_path)
    (tmp_path / "s" / "one").mkdir(parents=True)
    (tmp_path / "s" / "one" / "baseline.json").write_text(text)
    (tmp_path / "s" / "measurement.json").write_text(text)
    assert read_state(tmp_path / "s") == loads(text, where="x")
    (tmp_path / "empty").mkdir()
    assert read_state(tmp_path / "empty").cells == {}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"format": "export-bot-baseline", "version": 4}, "is version 4, written by a newer export-bot"),
        ({"format": "export-bot-baseline", "version": "2"}, "unknown baseline version '2'"),
        ({"format": "export-bot-baseline", "version": 1}, "a folder of JUnit XML as version 1"),
        ({"format": "something-else", "version": 2}, "not an export-bot baseline"),
        ([1, 2], "not an export-bot baseline"),
    ],
)
def test_other_formats_and_versions_are_refused_with_what_to_do(document, expected):
    with pytest.raises(BaselineError, match=expected):
        loads(json.dumps(document), where="baseline.json")


def _broken(tmp_path, edit) -> str:
    document = json.loads(state_of(tmp_path))
    edit(document)
    return json.dumps(document)


def _cell(document):
    return document["cells"]["BertModel::test_onnx_export_static"][0]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["measured"][0].update(commit="A" * 40), "40 lowercase hex"),
        (lambda d: d["measured"][0].update(source="fork"), "expected one of push, sweep, bisect"),
        (lambda d: d["measured"][0].update(time="yesterday"), "ISO 8601"),
        (lambda d: d["segments"][0].update(commits=[]), "one or more commit SHAs"),
        (lambda d: _cell(d).update(status="green"), "expected one of passed"),
        (lambda d: _cell(d).update(at=99), "index into `measured`"),
        (lambda d: _cell(d).update(duration=float("nan")), "finite number"),
        (lambda d: _cell(d).update(message="x" * (MESSAGE_LIMIT + 1)), "at most 500 characters"),
        (lambda d: _cell(d).update(properties={"evil": "1"}), "only compared"),
        (lambda d: d["cells"].update({"not a cell": []}), "not a cell id"),
        (lambda d: d.update(runs=[-1]), "whole number from 0"),
        (lambda d: d.update(runs=[True]), "whole number from 0"),
        (lambda d: d.update(cells=[]), "expected an object"),
    ],
)
def test_every_field_is_checked(tmp_path, edit, expected):
    with pytest.raises(BaselineError, match=expected):
        loads(_broken(tmp_path, edit), where="baseline.json")


def test_deep_and_malformed_json_is_an_error_not_a_traceback():
    with pytest.raises(BaselineError, match="nested deeper"):
        loads("[" * 100_000 + "]" * 100_000, where="deep.json")
    with pytest.raises(BaselineError, match="not an export-bot baseline"):
        loads("[" * 200 + "]" * 200, where="deep.json")
    with pytest.raises(BaselineError, match="not JSON"):
        loads('{"format": ', where="cut.json")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4),
    max_leaves=20,
)
TOP = ("runs", "segments", "full_sweeps", "due", "measured", "cells")
FIELDS = ("at", "status", "stage", "kind", "message", "probe", "duration", "components", "properties", "flipped")


@settings(max_examples=150, deadline=None, database=None)
@given(st.sampled_from([("top", k) for k in TOP] + [("cell", k) for k in FIELDS]), JSON)
def test_any_value_in_any_field_is_a_baseline_error_or_a_baseline(tmp_path_factory, where, value):
    document = json.loads(state_of(tmp_path_factory.mktemp("fuzz")))
    level, key = where
    target = document if level == "top" else document["cells"]["BertModel::test_onnx_export_static"][0]
    target[key] = value
    try:
        loads(json.dumps(document), where="fuzzed.json")
    except BaselineError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzzed.json")


def test_a_measurement_keeps_the_figures_of_its_value_comparison(tmp_path):
    figures = {"figure.max_abs_error": "2.8e-05", "figure.tolerance_ratio": "0.028", "figure.worst_output": "logits"}
    head = tmp_path / "head.xml"
    head.write_text(junit([Case("LlamaForCausalLM::test_onnx_export_static", extra={"compared": "values", **figures})]))
    run = measured(
        read_results([head]),
        commit=A,
        time="2026-12-04T08:00:00Z",
        run_id=9,
        source="push",
        segment=Segment(None, (A,), 9),
    )
    state = loads(dumps(fold(run)), where="baseline.json")
    (kept,) = state.cells[Cell.parse("LlamaForCausalLM::test_onnx_export_static")]
    # The numbers drift compares and the history plots; not the output's name.
    assert dict(kept.result.properties) == {
        "compared": "values", "figure.max_abs_error": "2.8e-05", "figure.tolerance_ratio": "0.028", "time.export": "0.500"
    }  # fmt: skip
