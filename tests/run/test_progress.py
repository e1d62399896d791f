"""The end-of-run summary table: rows per backend, and what it warns about."""

from __future__ import annotations


def test_the_summary_warns_of_test_names_the_bot_cannot_read():
    from bot.cells import Cell
    from bot.outcomes import Status
    from bot.run.progress import summary_table

    unread = Cell.from_testcase("BertModel", "test_onnx_export_sharded", lenient=True)
    precomputed = Cell.parse("BertModel::test_precomputed_inputs_match_eager")
    table = summary_table({unread: Status.PASSED, precomputed: Status.PASSED})
    assert table.splitlines()[-1] == (
        "warning: 1 test name(s) the bot cannot read, run and reported by name (row `other`): test_onnx_export_sharded"
    )
    assert "warning" not in summary_table({precomputed: Status.PASSED})
