"""The coalescing rule of the due sweep: pushes in a row start one sweep, not one each (docs/workflows.md)."""

from __future__ import annotations

from bot.results import ResultSet
from bot.results.baseline import Segment, fold, measured, pending_due, sweep_start

P1, P2, X = "1" * 40, "2" * 40, "3" * 40
IMPORTS = "imports: src/transformers/modeling_layers.py reached 1,712 classes, 17 sampled"


def push(commit: str, parent: str | None, run_id: int, due: tuple[str, ...] = ()):
    segment = Segment(parent, (commit,), run_id)
    return measured(
        ResultSet(), commit=commit, time="2026-12-05T01:00:00Z", run_id=run_id, source="push", segment=segment, due=due
    )


def sweep(commit: str, run_id: int):
    return measured(
        ResultSet(), commit=commit, time="2026-12-05T02:00:00Z", run_id=run_id, source="sweep", segment=None, full=True
    )


def test_nothing_due_starts_nothing():
    assert not sweep_start((), [], frozenset()).start


def test_a_reason_with_no_sweep_under_way_starts_one():
    decision = sweep_start((IMPORTS,), [], frozenset())
    assert decision.start and decision.why == IMPORTS


def test_a_sweep_still_measuring_covers_a_later_reason():
    # Run 7, started by the first push, is queued or measuring: the second push starts nothing.
    decision = sweep_start((IMPORTS,), [7], frozenset({5, 6}))
    assert not decision.start and "run 7" in decision.why


def test_a_sweep_whose_measurement_is_folded_covers_nothing_more():
    # Run 7 is still finishing (its track, its dashboard) but measured all it will: a new reason starts a sweep.
    assert sweep_start((IMPORTS,), [7], frozenset({5, 7})).start


def test_pending_reasons_are_those_no_sweep_at_or_after_their_commit_answered():
    first = fold(push(P1, None, 1, due=(IMPORTS,)))
    assert pending_due(first) == (f"{IMPORTS} (main@{P1[:7]})",)
    # The sweep at P1 answers P1's reason; a later push's reason stays due.
    second = fold(first, sweep(P1, 2), push(P2, P1, 3, due=("shared: src/transformers/cache_utils.py",)))
    assert pending_due(second) == (f"shared: src/transformers/cache_utils.py (main@{P2[:7]})",)
    assert pending_due(fold(second, push(X, P2, 4), sweep(X, 5))) == ()
