"""A proposal follows the walk the run recorded for each cell: the checkout's own scopes, as it really walked them."""

from __future__ import annotations

from dataclasses import replace

from bot.cells import Cell
from bot.diff.proposal import ADD
from bot.outcomes import Status
from bot.propose.proposal import propose
from bot.results.recorded_walk import recorded_walk
from bot.scopes import skip_scopes
from bot.skiplist.checkout_walk import read_walk
from bot.skiplist.model import read_skiplists
from tests.propose.helpers import report, result, skiplists_dir
from tests.run.test_checkout_judge import FIXTURES

NAMES = [
    "test_torch_export_generate_static",
    "test_torch_export_generate_dynamic",
    "test_torch_export_generate_dynamic_multi_token",
    "test_torch_export_generate_dynamic_multi_token_static_cache",
    "test_executorch_export_generate_dynamic_multi_token_xnnpack",
    "test_torch_export_dynamic",
]


def _results():
    """The run's results as the runner writes them: each cell with the walk its test looked up (`walk`)."""
    walk = read_walk(FIXTURES / "transformers_checkout_newest")
    out = {}
    for name in NAMES:
        cell = Cell.from_testcase("LlamaForCausalLM", name)
        failing = cell.backend == "dynamo" and cell.axes == "multi_token"
        properties = (("walk", ",".join(walk.skip(cell))), ("walk_gate", ",".join(walk.gate(cell))))
        out[cell] = replace(result(cell, Status.FAILED if failing else Status.PASSED), properties=properties)
    return out


def test_the_proposal_takes_the_scope_of_the_recorded_walk_and_says_so(tmp_path):
    folder = skiplists_dir(tmp_path)
    results = _results()
    recorded = recorded_walk(results.values(), None)
    proposal = propose(report(results), results, read_skiplists(folder, recorded))
    (edit,) = proposal.entries
    # Only the checkout's walk has a scope for the merged decode on one backend.
    assert (edit.action, edit.scope, edit.model_class) == (ADD, "dynamo.generate.multi_token", "LlamaForCausalLM")
    assert proposal.walk.startswith(
        "the checkout's tests/exporters/test_export.py, as the run recorded its lookups for 6 cells"
    )
    assert proposal.to_json()["walk"] == proposal.walk


def test_a_cell_without_a_record_follows_the_fallback():
    results = _results()
    recorded = recorded_walk(list(results.values())[:1], None)
    other = Cell.parse("BertModel::test_onnx_export_static")
    assert recorded.skip(other) == skip_scopes(other)  # the bot's own walk
    assert recorded_walk([result(other)], None) is None  # nothing recorded: the fallback alone


def test_a_cell_without_a_record_keeps_the_fallbacks_exactness_walk():
    from bot.scopes import exactness_scopes

    recorded = recorded_walk(list(_results().values())[:1], None)
    other = Cell.parse("BertModel::test_onnx_export_static")
    assert recorded.exactness(other) == exactness_scopes(other) and exactness_scopes(other)
