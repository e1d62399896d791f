"""Main's baseline state (bot/results/baseline.py): measurements from real JUnit, folded, read at a merge base, judged."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cells import Cell
from bot.results import read_results
from bot.results.baseline import (
    Baseline,
    Segment,
    at,
    chain,
    flips,
    fold,
    measured,
    newest,
    ranks,
    regressions,
    sweep_due,
)
from tests.results.factory import Case, junit

BERT = "BertModel::test_onnx_export_static"
GPT2 = "GPT2Model::test_torch_export_static"
NOW = "2026-12-10T00:00:00Z"
NEVER = lambda cell: False  # noqa: E731 -- no cell skiplisted


def sha(n: int) -> str:
    return f"{n:040x}"


def results(tmp_path, cases, name="junit.xml"):
    path = tmp_path / name
    path.write_text(junit(cases), encoding="utf-8")
    return read_results([path])


def passed(cell=BERT):
    return Case(cell)


def failed(cell=BERT):
    return Case(cell, status="failed", stage="export", message="torch._dynamo.exc.UserError: data-dependent branch")


def push(tmp_path, n, cases, *, parent=None, commits=None, day=1, rerun=None, full=False, due=()):
    """Push n: the commits it added (default: sha(n) alone onto sha(n - 1)), measured by run n."""
    commits = commits or (sha(n),)
    segment = Segment(sha(n - 1) if parent is None else parent, commits, n)
    again = results(tmp_path, rerun, f"rerun-{n}.xml") if rerun else None
    return measured(
        results(tmp_path, cases, f"push-{n}.xml"),
        commit=commits[-1],
        time=f"2026-12-{day:02d}T00:00:{n % 60:02d}Z",
        run_id=n,
        source="push",
        segment=segment,
        rerun=again,
        full=full,
        due=due,
    )


def sweep(tmp_path, n, cases, *, commit, day=1):
    return measured(
        results(tmp_path, cases, f"sweep-{n}.xml"),
        commit=commit,
        time=f"2026-12-{day:02d}T12:00:00Z",
        run_id=n,
        source="sweep",
        segment=Segment(None, (commit,), n),
        full=True,
    )


def statuses(state: Baseline, cell=BERT) -> list[tuple[str, str]]:
    return [(m.commit, m.result.status.value) for m in state.cells[Cell.parse(cell)]]


# --- at: the merge base ------------------------------------------------------------------------


def test_a_pr_is_judged_at_its_merge_base_not_at_a_newer_result(tmp_path):
    state = fold(push(tmp_path, 1, [passed()]), push(tmp_path, 2, [failed()]), push(tmp_path, 3, [passed(GPT2)]))
    base, age = at(state, sha(1), now=NOW, stale_days=7)
    assert base.results[Cell.parse(BERT)].status.value == "passed"
    assert Cell.parse(GPT2) not in base.results  # first measured after the merge base
    assert age.newest == sha(1) and age.behind == 0 and age.merge_base_known
    base, age = at(state, sha(3), now=NOW, stale_days=7)
    assert base.results[Cell.parse(BERT)].status.value == "failed"
    assert age.newest == sha(3) and age.behind == 0
    base, age = at(state, sha(2), now=NOW, stale_days=7)
    assert base.git_sha == sha(2)


def test_behind_counts_commits_between_the_newest_result_used_and_the_merge_base(tmp_path):
    state = fold(
        push(tmp_path, 1, [passed()]),
        push(tmp_path, 4, [], parent=sha(1), commits=(sha(2), sha(3), sha(4))),
        push(tmp_path, 5, []),
    )
    _, age = at(state, sha(5), now=NOW, stale_days=7)
    assert age.newest == sha(1) and age.behind == 4


def test_an_unknown_merge_base_uses_each_cells_newest_and_says_so(tmp_path):
    state = fold(push(tmp_path, 1, [passed()]), push(tmp_path, 2, [failed()]))
    for merge_base in (None, sha(99)):
        base, age = at(state, merge_base, now=NOW, stale_days=7)
        assert base.results[Cell.parse(BERT)].status.value == "failed"
        assert not age.merge_base_known and age.behind is None
    assert newest(state).results == base.results


def test_old_cells_are_counted_past_stale_days(tmp_path):
    state = fold(push(tmp_path, 1, [passed(), passed(GPT2)], day=1), push(tmp_path, 2, [passed()], day=8))
    _, age = at(state, sha(2), now="2026-12-09T00:00:00Z", stale_days=7)
    assert age.old_cells == 1  # GPT2, measured on the 1st; BERT again on the 8th


# --- the chain -----------------------------------------------------------------------------------


def test_the_chain_links_pushes_across_a_gap_and_never_reaches_force_pushed_commits():
    segments = (
        Segment(sha(0), (sha(1),), 1),
        # run 2 pushed sha(2) and never merged: a gap, bridged by its successor's parent
        Segment(sha(2), (sha(3),), 3),
        Segment(sha(3), (sha(4), sha(5)), 4),
    )
    assert chain(Baseline(segments=segments)) == tuple(map(sha, range(6)))
    forced = segments + (Segment(sha(3), (sha(6),), 5),)  # a force-push onto sha(3) drops sha(4), sha(5)
    assert chain(Baseline(segments=forced)) == (sha(0), sha(1), sha(2), sha(3), sha(6))
    # A sweep of sha(3) recorded later starts no second history, and brings back nothing dropped.
    swept = forced + (Segment(None, (sha(3),), 6),)
    assert chain(Baseline(segments=swept)) == (sha(0), sha(1), sha(2), sha(3), sha(6))
    # A push whose `before` no segment holds: the walk goes on from the push before it.
    lost = (Segment(sha(0), (sha(1),), 1), Segment(sha(7), (sha(8),), 2))
    assert chain(Baseline(segments=lost)) == (sha(0), sha(1), sha(7), sha(8))


def test_a_forged_cycle_of_segments_ends():
    loop = (Segment(sha(2), (sha(1),), 1), Segment(sha(1), (sha(2),), 2))
    assert sorted(chain(Baseline(segments=loop))) == [sha(1), sha(2)]


# --- fold ------------------------------------------------------------------------------------


def test_fold_keeps_one_measurement_per_commit_and_run_newest_first_at_most_keep(tmp_path):
    parts = [push(tmp_path, n, [passed() if n % 2 else failed()]) for n in range(1, 8)]
    state = fold(*parts, parts[3], keep=4)
    assert statuses(state) == [(sha(7), "passed"), (sha(6), "failed"), (sha(5), "passed"), (sha(4), "failed")]
    assert state.runs == frozenset(range(1, 8))
    # A measurement of a commit off the chain counts as older than every chain commit.
    stray = replace(push(tmp_path, 9, [failed()], parent=sha(50)), segments=())
    assert (sha(9), "failed") not in statuses(fold(state, stray, keep=4))
    assert statuses(fold(state, stray, keep=10))[-1] == (sha(9), "failed")


def test_a_due_reason_stays_until_a_full_sweep_at_or_after_its_commit(tmp_path):
    shared = push(tmp_path, 2, [passed()], due=("shared: src/transformers/modeling_utils.py",))
    state = fold(sweep(tmp_path, 1, [passed()], commit=sha(1)), push(tmp_path, 1, []), shared)
    assert state.due == ((sha(2), "shared: src/transformers/modeling_utils.py"),)
    assert any("modeling_utils" in r for r in sweep_due(state, now="2026-12-02T00:00:00Z", every_days=7))
    answered = fold(state, push(tmp_path, 3, []), sweep(tmp_path, 4, [passed()], commit=sha(3), day=2))
    assert answered.due == ()
    assert sweep_due(answered, now="2026-12-03T00:00:00Z", every_days=7) == ()


def test_sweep_due_when_none_yet_or_the_last_is_too_old(tmp_path):
    assert sweep_due(Baseline(), now=NOW, every_days=7) == ("no full sweep yet",)
    state = fold(sweep(tmp_path, 1, [passed()], commit=sha(1), day=1))
    (reason,) = sweep_due(state, now="2026-12-09T00:00:00Z", every_days=7)
    assert "7.5 days old" in reason and "sweep-every-days = 7" in reason
    assert sweep_due(state, now="2026-12-08T00:00:00Z", every_days=7) == ()


CASES = st.sampled_from([passed(), failed(), passed(GPT2), failed(GPT2), Case(BERT, status="skipped")])


@settings(max_examples=40, deadline=None, database=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.lists(CASES, max_size=2, unique_by=lambda c: c.cell)), max_size=5))
def test_fold_is_commutative_and_idempotent(tmp_path_factory, runs):
    folder = tmp_path_factory.mktemp("fold")
    parts = [push(folder, n, cases) for n, cases in runs]
    a = fold(*parts, keep=3)
    assert fold(*reversed(parts), keep=3) == a
    assert fold(a, *parts, keep=3) == a == fold(a, a, keep=3)
    if len(parts) > 1:
        # Folded in groups: the same newest results and the same regressions; a group whose own last
        # pass is older may have dropped the first failure after the union's last pass (`fold` keeps it
        # beyond `keep`), which can only leave `bad` newer, never older or wrong in kind.
        b = fold(fold(*parts[:1], keep=3), fold(*parts[1:], keep=3), keep=3)
        assert {c: ms[:3] for c, ms in b.cells.items()} == {c: ms[:3] for c, ms in a.cells.items()}
        rank = ranks(a)
        pairs = zip(regressions(a, NEVER), regressions(b, NEVER), strict=True)
        for direct, grouped in pairs:
            assert (grouped.cell, grouped.good) == (direct.cell, direct.good)
            assert (rank.get(grouped.bad.commit, -1), grouped.bad.time) >= (
                rank.get(direct.bad.commit, -1),
                direct.bad.time,
            )


# --- flips and regressions -------------------------------------------------------------------------


def test_flips_count_disagreeing_reruns_and_results_at_the_same_commit_within_the_window(tmp_path):
    first = push(tmp_path, 1, [failed()], rerun=[passed()])  # the confirming re-run disagreed
    again = replace(push(tmp_path, 1, [passed()]), runs=frozenset({11}))
    again = fold(
        Baseline(cells={c: tuple(replace(m, run_id=11) for m in ms) for c, ms in again.cells.items()}),
    )
    state = fold(first, again, push(tmp_path, 2, [failed()], rerun=[passed()]), push(tmp_path, 3, [passed()]))
    assert flips(state, window=10) == {Cell.parse(BERT): 3}
    assert flips(state, window=1) == {}
    crash = Case(BERT, status="error", kind="crash", message="worker crashed")
    assert flips(push(tmp_path, 4, [failed()], rerun=[crash]), window=10) == {}


def test_a_push_that_ran_the_cell_and_pushed_one_commit_is_the_culprit(tmp_path):
    state = fold(
        push(tmp_path, 1, [passed()]),
        push(tmp_path, 4, [passed(GPT2)], parent=sha(1), commits=(sha(2), sha(3), sha(4))),
        push(tmp_path, 5, [failed()]),
    )
    (regression,) = regressions(state, NEVER)
    assert regression.good.commit == sha(1) and regression.bad.commit == sha(5)
    assert regression.candidates == (sha(2), sha(3), sha(4), sha(5)) and regression.culprit == sha(5)


def test_a_push_running_a_cell_a_shared_push_broke_unseen_is_not_blamed(tmp_path):
    """Push 2 changes a shared path: it runs the core cells only (GPT2) and asks for a full sweep. Push 3
    touches Bert alone, runs it, and finds it broken: the break may be push 2's, so it is bisected."""
    state = fold(
        push(tmp_path, 1, [passed(), passed(GPT2)]),
        push(tmp_path, 2, [passed(GPT2)], due=("shared: src/transformers/modeling_utils.py",)),
        push(tmp_path, 3, [failed()]),
    )
    (regression,) = regressions(state, NEVER)
    assert regression.candidates == (sha(2), sha(3)) and regression.culprit is None
    # Once a bisect ran Bert at push 2's commit, the range is narrowed by results, not by blame.
    bisected = fold(state, replace(sweep(tmp_path, 9, [passed()], commit=sha(2)), segments=(), full_sweeps=()))
    (found,) = regressions(bisected, NEVER)
    assert found.candidates == (sha(3),) and found.culprit == sha(3)


def test_a_cell_failing_more_often_than_the_history_keeps_is_still_a_regression(tmp_path):
    """Passed at push 1, then failed at 12 pushes: with 10 results kept, the last pass and the first failure
    must stay, or the regression would vanish (the tracking issue closing, saying the cell passes again),
    or its culprit would be lost and bisected again every night."""
    parts = [push(tmp_path, 1, [passed()])] + [push(tmp_path, n, [failed()]) for n in range(2, 14)]
    state = fold(*parts, keep=10)
    assert [m.commit for m in state.cells[Cell.parse(BERT)]][-2:] == [sha(2), sha(1)]
    (regression,) = regressions(state, NEVER)
    assert (regression.good.commit, regression.bad.commit, regression.culprit) == (sha(1), sha(2), sha(2))
    # Folded in any grouping, the same state.
    assert fold(fold(*parts[:6], keep=10), fold(*parts[6:], keep=10), keep=10) == state
    assert fold(*reversed(parts), keep=10) == state
    # Once it passes again, the old pass is no longer kept beyond the 10.
    fixed = fold(state, push(tmp_path, 14, [passed()]), keep=10)
    assert len(fixed.cells[Cell.parse(BERT)]) == 10 and regressions(fixed, NEVER) == ()
    # A culprit a bisect named (a pass at its parent) stays named however long the cell keeps failing.
    found = fold(push(tmp_path, 20, [passed()]), *(push(tmp_path, n, [failed()]) for n in range(21, 40)), keep=10)
    assert regressions(found, NEVER)[0].culprit == sha(21)


def test_a_crash_after_a_break_leaves_the_regression_open(tmp_path):
    """Broken at push 2; the sweep at push 3 crashed (the runner ran out of memory): still broken, not fixed."""
    crash = Case(BERT, status="error", kind="crash", message="worker crashed")
    state = fold(push(tmp_path, 1, [passed()]), push(tmp_path, 2, [failed()]), push(tmp_path, 3, [crash]))
    (regression,) = regressions(state, NEVER)
    assert (regression.good.commit, regression.bad.commit, regression.culprit) == (sha(1), sha(2), sha(2))
    assert regressions(fold(state, push(tmp_path, 4, [passed()])), NEVER) == ()


def test_a_failure_its_confirming_rerun_contradicted_is_a_flip_not_a_regression(tmp_path):
    """Push 2 failed the cell and its re-run passed it: flaky, counted as a flip; no tracking issue blames
    push 2 (it ran the cell alone), and no bisect runs for it. A confirmed failure later is a regression."""
    state = fold(push(tmp_path, 1, [passed()]), push(tmp_path, 2, [failed()], rerun=[passed()]))
    assert flips(state, window=10) == {Cell.parse(BERT): 1}
    assert regressions(state, NEVER) == ()
    (regression,) = regressions(fold(state, push(tmp_path, 3, [failed()], rerun=[failed()])), NEVER)
    assert (regression.good.commit, regression.bad.commit) == (sha(1), sha(3))


def test_a_sweep_finding_has_candidates_and_no_culprit_until_bisected(tmp_path):
    state = fold(
        sweep(tmp_path, 1, [passed(GPT2)], commit=sha(1)),
        push(tmp_path, 1, []),
        push(tmp_path, 6, [passed()], parent=sha(1), commits=tuple(map(sha, range(2, 7)))),
        sweep(tmp_path, 7, [failed(GPT2)], commit=sha(6), day=2),
        sweep(tmp_path, 8, [failed(GPT2)], commit=sha(6), day=3),
    )
    (regression,) = regressions(state, NEVER)
    assert regression.cell == Cell.parse(GPT2) and regression.culprit is None
    assert regression.candidates == tuple(map(sha, range(2, 7)))
    assert regression.bad.run_id == 7  # the oldest failing result after the last good one
    bisected = fold(state, replace(sweep(tmp_path, 9, [failed(GPT2)], commit=sha(4)), segments=()))
    bisected = fold(bisected, replace(sweep(tmp_path, 10, [passed(GPT2)], commit=sha(3)), segments=()))
    (found,) = regressions(bisected, NEVER)
    assert found.candidates == (sha(4),) and found.culprit == sha(4)


def test_skiplisted_crashing_and_never_passing_cells_are_no_regressions(tmp_path):
    crash = Case(BERT, status="error", kind="crash", message="worker crashed")
    state = fold(
        push(tmp_path, 1, [passed(), passed(GPT2), failed("LlamaModel::test_torch_export_static")]),
        push(tmp_path, 2, [crash, failed(GPT2), failed("LlamaModel::test_torch_export_static")]),
    )
    assert [r.cell.id for r in regressions(state, NEVER)] == [GPT2]
    assert regressions(state, lambda cell: cell.model_class == "GPT2Model") == ()


def test_a_failure_its_confirming_rerun_contradicted_is_a_flake_not_a_regression(tmp_path):
    """Main's newest result failed, its re-run passed: flaky (counted by flips), no tracking issue, no bisect."""
    state = fold(push(tmp_path, 1, [passed()]), push(tmp_path, 2, [failed()], rerun=[passed()]))
    assert regressions(state, NEVER) == () and flips(state, window=10) == {Cell.parse(BERT): 1}
    confirmed = fold(state, push(tmp_path, 3, [failed()], rerun=[failed()]))
    (regression,) = regressions(confirmed, NEVER)  # confirmed now: a regression since the last pass
    assert regression.good.commit == sha(1)
