"""The cost a report carries: cell time, and CPU time per backend from each cell's `cpu_seconds` (docs/reports.md)."""

from __future__ import annotations

from bot.cells import Cell
from bot.diff import diff
from bot.outcomes import CellResult, Status
from bot.report import render_comment
from bot.results import ResultSet
from bot.skiplist.model import load_skiplists


def _cell(name: str, duration: float, cpu: str | None) -> tuple[Cell, CellResult]:
    cell = Cell.parse(name)
    properties = (("cpu_seconds", cpu),) if cpu is not None else ()
    return cell, CellResult(cell, Status.PASSED, duration=duration, properties=properties)


def test_cpu_seconds_are_summed_per_backend_and_a_cell_without_them_counts_its_duration(tmp_path):
    head = ResultSet(
        dict(
            [
                _cell("BertModel::test_onnx_export_static", 100.0, "150.5"),  # two threads busy
                _cell("BertModel::test_onnx_export_dynamic", 50.0, None),  # an older runner's JUnit
                _cell("BertModel::test_torch_export_static", 40.0, "30.0"),
                _cell("GPT2Model::test_torch_export_static", 20.0, "nan"),  # not a number: its duration
            ]
        ),
        files=("shard-1/junit.xml", "shard-2/junit.xml"),
    )
    report = diff(None, head, load_skiplists(tmp_path))
    assert report.cell_seconds == 210.0
    assert report.backend_seconds == {"dynamo": 50.0, "onnx": 200.5}
    cost = next(line for line in render_comment(report).splitlines() if line.startswith("Cost:"))
    assert cost == "Cost: 4 cells, 4 min of cell time (CPU: dynamo 50 s, onnx 3 min) on 2 shards."
