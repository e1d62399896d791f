"""Obsolete skips: removal when every covered cell passed in probe, narrowing when part does, K-history."""

from __future__ import annotations

import pytest

from bot.cells import Cell
from bot.diff.proposal import NARROW, REMOVE
from bot.outcomes import Status
from bot.propose.obsolete import obsolete_edits, pass_streak
from bot.skiplist.model import Skiplist
from tests.propose.helpers import outcomes, result, row


def skiplist(**scopes) -> Skiplist:
    return Skiplist("export_skips.toml", {scope.replace("__", "."): table for scope, table in scopes.items()})


def probe(cells, failing=lambda c: False):
    return outcomes(cells, failing, probe=True)


def edits(sk, runs, k=1):
    return list(obsolete_edits(sk, runs, k))


SK = skiplist(onnx={"FooModel": "Why."}, dynamic={"BarModel": "Why not."})


def test_every_covered_cell_passes_removes_the_entry():
    (edit,) = edits(SK, [probe(row())])
    assert (edit.action, edit.scope, edit.model_class) == (REMOVE, "onnx", "FooModel")
    assert set(edit.evidence) == {"FooModel::test_onnx_export_static", "FooModel::test_onnx_export_dynamic"}


def test_part_passes_narrows_to_what_still_fails():
    (edit,) = edits(SK, [probe(row(), lambda c: c.dynamic)])
    assert (edit.action, edit.scope, edit.new_scopes) == (NARROW, "onnx", ("onnx.dynamic",))
    assert edit.evidence == ("FooModel::test_onnx_export_static",)
    assert edit.still_failing == ("FooModel::test_onnx_export_dynamic",)


def test_a_backend_agnostic_entry_narrows_to_one_backend():
    (edit,) = edits(SK, [probe(row("BarModel"), lambda c: c.backend == "onnx")])
    assert (edit.action, edit.scope, edit.new_scopes) == (NARROW, "dynamic", ("onnx.dynamic",))


def test_nothing_passes_nothing_changes():
    assert edits(SK, [probe(row(), lambda c: True)]) == []


def test_no_probe_result_is_no_evidence():
    skipped = {c: result(c, Status.SKIPPED) for c in row()}
    assert edits(SK, [skipped]) == []


def test_generative_narrowing_keeps_a_failing_cell_the_walk_cannot_isolate():
    # Only the forward dynamic ONNX cell fails; no scope takes it without the dynamic generate
    # cells, which pass. Narrowing keeps it skipped under `onnx.dynamic` rather than unskip it.
    cells = row(generative=True)
    lone = Cell("FooModel", "onnx", "dynamic")
    (edit,) = edits(SK, [probe(cells, lambda c: c == lone)])
    assert (edit.action, edit.new_scopes) == (NARROW, ("onnx.dynamic",))


def test_narrowing_into_a_scope_that_already_lists_the_class_is_a_removal():
    sk = skiplist(onnx={"FooModel": "Broad."}, onnx__dynamic={"FooModel": "Narrow."})
    found = {(e.action, e.scope) for e in edits(sk, [probe(row(), lambda c: c.dynamic)])}
    assert found == {(REMOVE, "onnx")}


def test_unknown_scopes_are_left_alone():
    sk = skiplist(generate__runtime={"FooModel": "Upstream scope."})
    assert edits(sk, [probe(row(generative=True))]) == []


class TestExactness:
    SK = skiplist(onnx__exactness={"FooModel": "Drifts."})
    CELLS = [c for c in row() if c.backend == "onnx"]

    def test_a_compared_pass_removes(self):
        (edit,) = edits(self.SK, [probe(self.CELLS)])
        assert edit.action == REMOVE

    def test_passed_uncompared_proves_nothing(self):
        run = {c: result(c, Status.PASSED_UNCOMPARED, probe=True) for c in self.CELLS}
        assert edits(self.SK, [run]) == []

    def test_a_failed_comparison_keeps_it(self):
        run = {c: result(c, Status.FAILED, stage="compare", probe=True) for c in self.CELLS}
        assert edits(self.SK, [run]) == []


class TestHistory:
    PASS = probe(row())
    FAIL = probe(row(), lambda c: True)
    NOTHING = {}

    @pytest.mark.parametrize(
        "runs, removed",
        [
            (["PASS", "PASS"], False),  # two passing probes are not enough with K=3
            (["PASS", "PASS", "PASS"], True),
            (["FAIL", "PASS", "PASS", "PASS"], True),
            (["PASS", "FAIL", "PASS", "PASS"], False),  # a failure in between resets the count
            (["PASS", "PASS", "PASS", "FAIL"], False),  # the newest run decides first
            (["PASS", "PASS", "NOTHING", "PASS"], True),  # a run that did not probe the entry says nothing
        ],
    )
    def test_k_consecutive_passes(self, runs, removed):
        found = edits(SK, [getattr(self, name) for name in runs], k=3)
        assert [(e.action, e.scope) for e in found] == ([(REMOVE, "onnx")] if removed else [])

    def test_narrowing_needs_k_passes_per_cell_too(self):
        static_ok = probe(row(), lambda c: c.dynamic)
        dynamic_once = probe(row())
        (edit,) = edits(SK, [static_ok, static_ok, dynamic_once], k=3)
        # Static passed three times; dynamic only once: narrowed, not removed.
        assert (edit.action, edit.new_scopes) == (NARROW, ("onnx.dynamic",))

    def test_pass_streak(self):
        cell = Cell("FooModel", "onnx", "static")
        runs = [self.PASS, self.FAIL, self.PASS, self.NOTHING, self.PASS]
        assert pass_streak(cell, runs, exactness=False) == 2
        assert pass_streak(cell, [self.NOTHING], exactness=False) is None
