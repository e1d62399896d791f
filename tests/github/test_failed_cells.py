"""Which cells `/export-check failed` takes from a report, and which reports it refuses (pure)."""

from __future__ import annotations

import pytest

from bot.cells import CellIdError
from bot.diff.model import CellLine, Report
from bot.publish.command import (
    MAX_CELL_ID,
    FailedCells,
    failing_cells,
    left_out_reply,
    no_failing_reply,
    no_report_reply,
    unusable_report_reply,
)

BERT = "BertModel::test_onnx_export_static"
LLAMA = "LlamaForCausalLM::test_torch_export_dynamic"
VIT = "ViTModel::test_openvino_export_static"
GPT2 = "GPT2Model::test_executorch_export_static_xnnpack"


def report(**categories) -> Report:
    lines = {name: tuple(CellLine(*line) if isinstance(line, tuple) else line for line in found)
             for name, found in categories.items()}  # fmt: skip
    return Report("failure", "broken", True, categories=lines)


def test_newly_broken_new_failing_and_still_failing_cells_are_taken_sorted_by_id():
    found = failing_cells(
        report(
            newly_broken=[(VIT, "failed")],
            new_failing=[(LLAMA, "error")],  # an error (a crash, a timeout) fails too
            still_failing=[(BERT, "failed")],
        )
    )
    assert found == FailedCells((BERT, LLAMA, VIT), 3)


def test_flaky_skipped_passing_covered_and_probed_cells_are_left_out():
    found = failing_cells(
        report(
            flaky=[(BERT, "failed")],
            newly_skipped=[(LLAMA, "skipped")],
            newly_passing=[(VIT, "passed")],
            not_run=[(GPT2, "missing")],
            newly_broken=[CellLine(LLAMA, "failed", covered_by="onnx.static")],
            still_failing=[CellLine(VIT, "failed", probe=True)],
        )
    )
    assert found == FailedCells((), 0)


def test_beyond_the_limit_the_first_cells_by_id_are_taken_and_the_rest_counted():
    ids = [f"Model{i:03d}::test_onnx_export_static" for i in range(150)]
    found = failing_cells(report(newly_broken=[(i, "failed") for i in reversed(ids)]), limit=100)
    assert found.cells == tuple(ids[:100]) and found.total == 150 and found.left_out == 50
    assert "150 failing cells" in left_out_reply(found, 7) and "other 50" in left_out_reply(found, 7)


@pytest.mark.parametrize(
    "hostile",
    [
        "Bert; rm -rf /",
        "BertModel::test_onnx_export_static; rm -rf /",
        "A" * 10_000 + "::test_onnx_export_static",
        "BertModel::test_onnx_export_static\n@everyone",
        "BertModel\n::test_onnx_export_static",
        "$(curl evil)::test_onnx_export_static",
        "",
    ],
)
@pytest.mark.parametrize("category", ["newly_broken", "still_failing"])
def test_a_report_listing_a_hostile_cell_id_is_refused_whole(hostile, category):
    # Even a covered line is checked: a report that lists one forged id is not read at all.
    with pytest.raises(CellIdError) as caught:
        failing_cells(report(**{category: [(BERT, "failed"), CellLine(hostile, "failed", covered_by="x")]}))
    message = str(caught.value)
    assert f"categories.{category}[1]" in message
    assert "\n" not in message and "@everyone" not in message and len(message) < 300


def test_a_cell_id_at_the_bound_is_taken():
    name = "A" * (MAX_CELL_ID - len("::test_onnx_export_static"))
    assert failing_cells(report(new_failing=[(f"{name}::test_onnx_export_static", "failed")])).total == 1
    with pytest.raises(CellIdError):
        failing_cells(report(new_failing=[(f"A{name}::test_onnx_export_static", "failed")]))


def test_the_replies_name_the_head_and_the_run():
    sha = "c0ffee" * 7
    assert "no conformance report for the current head c0ffeec0ffee" in no_report_reply(sha)
    assert "(run 12)" in no_failing_reply(sha, 12) and "flaky" in no_failing_reply(sha, 12)
    assert "(run 12) cannot be used" in unusable_report_reply(sha, 12, "a problem")


def test_the_longest_id_of_the_installed_transformers_is_within_the_bound():
    from bot.models.index import installed_index

    classes = installed_index().classes
    if not classes:
        pytest.skip("transformers is not installed")
    longest = max(classes, key=len) + "::test_executorch_export_generate_dynamic_static_cache_xnnpack"
    assert failing_cells(report(newly_broken=[(longest, "failed")])).cells == (longest,)


def test_a_full_request_stays_a_small_dispatch_input():
    # GitHub bounds a dispatch's inputs: the most a `failed` request carries is about 21,000 characters.
    from bot.publish.command import MAX_FAILED, Request

    name = "A" * (MAX_CELL_ID - len("::test_onnx_export_static") - 3)
    cells = tuple(f"{name}{i:03d}::test_onnx_export_static" for i in range(MAX_FAILED))
    found = failing_cells(report(newly_broken=[(c, "failed") for c in cells]))
    assert found.cells == cells
    assert len(Request("failed", cells=found.cells, pr=1, head_sha="a" * 40, comment_id=1).to_json()) < 21_000
