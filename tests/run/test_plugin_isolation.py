"""A cell that kills its process or hangs ends as an error of the right kind; every other cell keeps its real result."""

from __future__ import annotations

import pytest

from tests.run.plugin_helpers import MISBEHAVING, run_cells

# Short, but long enough for the tiny model's dynamo export on a busy 2-core machine: the
# libraries are imported during collection, outside each cell's timer.
TIMEOUT = 20


@pytest.mark.export
def test_xdist_replaces_crashed_and_hung_workers(tmp_path):
    code, junit = run_cells(
        tmp_path,
        [
            "AbortingModel::test_torch_export_static",  # os.abort() in forward
            "TinyModel::test_torch_export_static",
            "HangingModel::test_torch_export_static",  # sleeps forever in forward
            "TinyModel::test_torch_export_dynamic",
            "GhostModel::test_torch_export_static",  # not in the checkout
        ],
        source=MISBEHAVING,
        workers=2,
        cell_timeout=TIMEOUT,
    )
    assert code in (0, 1), f"pytest exited {code}"
    assert len(junit.cases) == 5

    crash = junit.cases["AbortingModel::test_torch_export_static"]
    assert (crash.outcome, crash.properties["kind"]) == ("error", "crash")
    assert crash.message.startswith("WorkerCrash: worker gw")
    assert crash.properties["backend"] == "dynamo" and crash.properties["probe"] == "false"

    hang = junit.cases["HangingModel::test_torch_export_static"]
    assert (hang.outcome, hang.properties["kind"]) == ("error", "timeout")
    assert hang.message == f"Timeout: the cell ran longer than {TIMEOUT} s (--cell-timeout)"

    for shape in ("static", "dynamic"):
        case = junit.cases[f"TinyModel::test_torch_export_{shape}"]
        assert case.outcome == "passed", case.text
        assert float(case.properties["time.export"]) > 0
    ghost = junit.cases["GhostModel::test_torch_export_static"]
    # Typed by the controller from a worker's report: not buildable by this source.
    assert (ghost.outcome, ghost.kind, ghost.properties["not_buildable"]) == ("skipped", "not-buildable", "true")


def test_in_process_timeout_fails_only_the_hung_cell(tmp_path):
    # Without workers pytest-timeout's signal method interrupts the Python-level hang in place.
    code, junit = run_cells(
        tmp_path,
        ["HangingModel::test_torch_export_static", "GhostModel::test_torch_export_static"],
        source=MISBEHAVING,
        workers=0,
        cell_timeout=3,
        in_process=True,
    )
    hang = junit.cases["HangingModel::test_torch_export_static"]
    assert (hang.outcome, hang.properties["kind"]) == ("error", "timeout")
    assert hang.message == "Timeout: the cell ran longer than 3 s (--cell-timeout)"
    assert junit.cases["GhostModel::test_torch_export_static"].kind == "not-buildable"
