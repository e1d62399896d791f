"""The pytest plugin end to end without exporting: JUnit shape (docs/outcomes.md), skips, build errors, probe, suite properties."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cells import Cell
from bot.run.plan import RunPlan
from bot.run.session import SessionOptions, pytest_args
from tests.run.plugin_helpers import run_cells

SKIPS = """
[onnx]
BertModel = "ONNX cannot do this (test reason)."

["onnx.dynamic"]
GhostModel = "Skipped while probing."
"""


@pytest.fixture(scope="module")
def junit(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plugin")
    code, result = run_cells(
        tmp,
        [
            "BertModel::test_onnx_export_static",  # skipped by [onnx]
            "GhostModel::test_torch_export_static",  # the zoo has no recipe: not buildable by this source
            "GhostModel::test_executorch_export_generate_static_static_cache_xnnpack",
        ],
        skips=SKIPS,
        shard="2/3",
        in_process=True,  # pytest.main here: torch is imported once for the whole module
    )
    assert code in (0, 1), f"pytest exited {code}"
    return result


def test_every_testcase_is_a_cell_named_by_its_id(junit):
    assert set(junit.cases) == {
        "BertModel::test_onnx_export_static",
        "GhostModel::test_torch_export_static",
        "GhostModel::test_executorch_export_generate_static_static_cache_xnnpack",
    }
    for cell_id, case in junit.cases.items():
        assert case.cell == Cell.parse(cell_id)
        assert case.properties["backend"] == case.cell.backend
        assert case.properties["shape"] == case.cell.shape
        assert case.properties["path"] == case.cell.path
        assert case.properties.get("cache") == case.cell.cache
        assert case.properties.get("target") == case.cell.target
        assert case.properties["probe"] == "false"


def test_skiplisted_cell_is_skipped_with_scope_and_reason(junit):
    case = junit.cases["BertModel::test_onnx_export_static"]
    assert case.outcome == "skipped"
    assert case.message == "ONNX cannot do this (test reason)."
    assert case.properties["skip_scope"] == "onnx"


def test_a_class_the_source_cannot_build_is_a_typed_skip_with_its_reason(junit, tmp_path):
    case = junit.cases["GhostModel::test_torch_export_static"]
    # Any JUnit reader sees a skip; the bot's reader sees its own outcome (docs/outcomes.md).
    assert (case.outcome, case.kind) == ("skipped", "not-buildable")
    assert case.message.startswith("GhostModel is not in any auto mapping")
    assert case.properties["not_buildable"] == "true"
    assert "kind" not in case.properties and "stage" not in case.properties
    assert "Traceback" not in case.text


def test_suite_properties_name_versions_source_and_shard(junit):
    for package in ("transformers", "torch", "onnx", "onnxscript", "onnxruntime", "openvino", "executorch"):
        assert junit.suite[f"version.{package}"]
    assert junit.suite["source"] == "zoo"
    assert junit.suite["shard"] == "2/3"
    # Provenance: the installed package's folder; no sha, since no git work tree tracks site-packages.
    import transformers

    assert junit.suite["transformers.location"] == str(Path(transformers.__file__).resolve().parent)
    assert "transformers.sha" not in junit.suite


def test_probe_runs_a_skiplisted_cell_and_records_probe_true(tmp_path):
    code, result = run_cells(
        tmp_path,
        ["GhostModel::test_torch_export_dynamic"],
        skips=SKIPS.replace("onnx.dynamic", "dynamic"),
        probe=True,
        in_process=True,
    )
    case = result.cases["GhostModel::test_torch_export_dynamic"]
    # Its real outcome, not the skiplist's skip: the source's reason.
    assert (case.outcome, case.kind) == ("skipped", "not-buildable")
    assert case.message.startswith("GhostModel is not in any auto mapping")
    assert case.properties["probe"] == "true"
    assert case.properties["skip_scope"] == "dynamic"


def test_session_arguments_isolate_cells_under_xdist_and_time_them_out(tmp_path):
    plan = RunPlan(cells=(Cell.parse("BertModel::test_torch_export_static"),), cell_timeout=7)
    args = pytest_args(plan, tmp_path / "run.cells.json", SessionOptions(junit=tmp_path / "o.xml", workers=2))
    assert args[args.index("-n") + 1] == "2"
    assert args[args.index("--timeout") + 1] == "7"
    assert args[args.index("--timeout-method") + 1] == "thread"
    assert args[-1] == str(tmp_path / "run.cells.json")
    serial = pytest_args(plan, tmp_path / "run.cells.json", SessionOptions(junit=tmp_path / "o.xml", workers=0))
    assert "-n" not in serial and serial[serial.index("--timeout-method") + 1] == "signal"
