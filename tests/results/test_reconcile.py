"""The head held against its selection (bot/results/reconcile.py): which selected cells lack a result, which shards held them."""

from __future__ import annotations

from bot.cells import Cell, cells_for
from bot.outcomes import CellResult, Status
from bot.results import ResultSet
from bot.results.reconcile import reconcile

SELECTED = [*cells_for("BertModel", generative=False), *cells_for("ViTModel", generative=False)]  # 16 cells


def head(*cells: Cell) -> ResultSet:
    return ResultSet({cell: CellResult(cell, Status.PASSED) for cell in cells})


def test_every_selected_cell_with_a_result_is_not_missing():
    found = reconcile(head(*SELECTED), SELECTED)
    assert (found.selected, found.missing, found.shards) == (16, (), ())


def test_missing_cells_are_named_by_id_and_the_split_names_the_shards_that_held_them():
    split = [[c.id for c in SELECTED[i::3]] for i in range(3)]  # 3 shards, interleaved
    found = reconcile(head(*SELECTED[:15]), SELECTED, split)
    assert found.missing == (SELECTED[15],) and found.shards == ("1/3",)
    found = reconcile(head(SELECTED[0]), SELECTED, split)
    assert [c.id for c in found.missing] == sorted(c.id for c in SELECTED[1:])
    assert found.shards == ("1/3", "2/3", "3/3")


def test_without_a_split_or_with_one_that_lacks_a_missing_cell_the_whole_run_is_named():
    assert reconcile(head(), SELECTED).shards == ()
    partial = [[c.id for c in SELECTED[:8]]]  # a split that does not hold the ViT cells says nothing reliable
    assert reconcile(head(), SELECTED, partial).shards == ()


def test_cells_the_head_holds_beyond_the_selection_are_not_missing_and_duplicates_count_once():
    extra = Cell.parse("LlamaModel::test_onnx_export_static")
    found = reconcile(head(*SELECTED, extra), SELECTED + SELECTED[:2])
    assert (found.selected, found.missing) == (16, ())
