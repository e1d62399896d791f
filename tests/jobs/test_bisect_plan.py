"""The bisect planner, exhaustively: every range length, every culprit, untestable commits, budgets, shared ranges."""

from __future__ import annotations

import math

import pytest

from bot.cells import Cell
from bot.jobs.bisect_plan import Range, Step, describe, next_commit, plan, ranges

COMMITS = tuple(f"{i:040x}" for i in range(1, 40))
A, B = Cell("BertModel", "dynamo"), Cell("GPT2Model", "onnx")


def span(n: int, cells=(A,), start: int = 1) -> Range:
    return Range(COMMITS[start - 1], COMMITS[start + n - 1], COMMITS[start : start + n], tuple(cells))


def narrowed(s: Range, commit: str, fails: bool) -> Range:
    i = s.candidates.index(commit)
    if fails:
        return Range(s.good, commit, s.candidates[: i + 1], s.cells)
    return Range(commit, s.bad, s.candidates[i + 1 :], s.cells)


def bisect(s: Range, culprit: str, *, untestable=frozenset(), steps: int = 100):
    """Drive the planner with an oracle: the cells fail from `culprit` on; `untestable` commits give no answer."""
    tried, ran = set(), []
    while True:
        decided = plan([s], frozenset(tried), steps_left=steps - len(ran), seconds_left=60)
        if decided.step is None:
            return decided, ran
        commit = decided.step.commit
        ran.append(commit)
        tried.update((commit, cell) for cell in decided.step.cells)
        if commit not in untestable:
            s = narrowed(s, commit, COMMITS.index(commit) >= COMMITS.index(culprit))


@pytest.mark.parametrize("n", range(1, 17))
def test_every_culprit_of_every_range_is_found_in_log2_steps(n):
    for k in range(n):
        s = span(n)
        culprit = s.candidates[k]
        decided, ran = bisect(s, culprit)
        [found] = decided.found
        assert found.candidates == (culprit,) and not decided.left and not decided.stuck
        assert len(ran) <= math.ceil(math.log2(n)) if n > 1 else ran == []
        assert s.bad not in ran and s.good not in ran  # both ends are known already


@pytest.mark.parametrize("n", range(2, 10))
def test_untestable_commits_are_stepped_around_and_a_range_of_only_those_is_undecided(n):
    for k in range(n):
        s = span(n)
        culprit = s.candidates[k]
        for skipped in s.candidates[:-1]:
            decided, ran = bisect(s, culprit, untestable={skipped})
            assert len(ran) == len(set(ran))  # no commit run twice
            if decided.found:
                assert decided.found[0].candidates == (culprit,)
            else:  # the skipped commit is next to the culprit: git bisect's "skip" says the same
                [stuck] = decided.stuck
                assert culprit in stuck.candidates and skipped in stuck.candidates and len(stuck.candidates) == 2
        everything = set(s.candidates[:-1])
        decided, ran = bisect(s, culprit, untestable=everything)
        assert sorted(ran) == sorted(everything) and len(decided.stuck) == 1


def test_out_of_budget_stops_and_says_what_is_left():
    s = span(8)
    decided, ran = bisect(s, s.candidates[5], steps=1)
    assert len(ran) == 1 and decided.out_of_budget and not decided.found
    [left] = decided.left
    assert len(left.candidates) == 4
    [line] = describe(decided)
    assert line.startswith("out of budget: between") and "(4 commits left)" in line
    no_time = plan([span(8)], frozenset(), steps_left=5, seconds_left=0)
    assert no_time.step is None and no_time.out_of_budget


def test_ranges_that_want_the_same_commit_run_in_one_step():
    first, second = span(5, (A,)), span(5, (B,))
    decided = plan([first, second], frozenset(), steps_left=8, seconds_left=60)
    assert decided.step == Step(first.candidates[2], (A, B))
    other = span(3, (B,), start=10)
    decided = plan([first, other], frozenset(), steps_left=8, seconds_left=60)
    assert decided.step == Step(first.candidates[2], (A,))


def test_a_commit_counts_as_run_only_for_the_cells_that_ran_there():
    s = span(5, (A, B))
    middle = s.candidates[2]
    assert next_commit(s, frozenset({(middle, A)})) == middle  # B has not run there yet
    assert next_commit(s, frozenset({(middle, A), (middle, B)})) != middle


def test_nothing_to_do():
    decided = plan([], frozenset(), steps_left=8, seconds_left=60)
    assert decided.step is None and not decided.out_of_budget and describe(decided) == []


def test_ranges_group_cells_and_leave_known_culprits_out_unless_being_bisected():
    from bot.outcomes import CellResult, Status
    from bot.results.baseline import Measurement, Regression

    def reg(cell, good, bad, candidates, culprit=None):
        m = lambda sha: Measurement(sha, "t", 1, "sweep", CellResult(cell, Status.PASSED))  # noqa: E731
        return Regression(cell, m(good), m(bad), culprit, candidates)

    c = COMMITS
    found = [
        reg(A, c[0], c[3], c[1:4]),
        reg(B, c[0], c[3], c[1:4]),
        reg(Cell("T5Model", "onnx"), c[3], c[4], c[4:5], c[4]),
    ]
    found.append(reg(Cell("OPTModel", "dynamo"), c[0], c[9], (), None))  # not in the chain: nothing to run
    assert [(s.cells, s.candidates) for s in ranges(found)] == [((A, B), c[1:4])]
    t5 = Cell("T5Model", "onnx")
    assert [(s.cells, s.found) for s in ranges(found, frozenset({t5}))] == [((A, B), False), ((t5,), True)]
