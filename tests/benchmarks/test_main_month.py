"""benchmarks/main_month.py's core on tiny months: no selected cell lost, GitHub's concurrency as documented, cost monotone."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "main_month.py"


@pytest.fixture(scope="module")
def mm():
    spec = importlib.util.spec_from_file_location("main_month", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def world(mm):
    return mm.build_world()


def _two_pushes(mm, gap_seconds: float):
    """One day: the cron at 03:17, then two other-src pushes `gap_seconds` apart from 10:00."""
    pushes = tuple(
        mm.Push(n + 1, 10 * mm.HOUR + n * gap_seconds, "other-src", ("src/transformers/trainer.py",)) for n in range(2)
    )
    return mm.Month(1, pushes, (), ())


def test_today_cancels_the_running_sweep_and_loses_what_it_spent(mm, world):
    today = mm.simulate_today(world, _two_pushes(mm, 600))
    walls = mm._sweep_walls(world)
    light = mm.ASSUMED["light_job_s"]
    assert (today.runs, today.cancelled, today.sweeps) == (3, 1, 2)
    # Cancelled 10 minutes in: the plan job whole, every shard for the 9 minutes it had run.
    assert today.lost_runner_s == pytest.approx(light + sum(min(600 - light, w) for w in walls))
    assert today.lost_cells == len(world.full_cells) > 10_000


def test_today_cancels_nothing_when_each_sweep_ends_before_the_next_push(mm, world):
    today = mm.simulate_today(world, _two_pushes(mm, 3 * mm.HOUR))
    assert (today.cancelled, today.lost_runner_s, today.sweeps) == (0, 0.0, 3)


def test_merge_group_replaces_the_pending_job_and_the_next_merge_folds_its_measurement(mm):
    """GitHub: one running and one pending per group; a newer job replaces the pending one."""
    measured = [mm.Measurement(0, 0.0, None, 0)] + [
        mm.Measurement(n, t, frozenset(), 1) for n, t in ((1, 0.0), (2, 10.0), (3, 20.0))
    ]
    out = mm.Outcome([0.0])
    folds = mm._merge_group(measured, mm.Month(1, (), (), ()), out)
    seconds = mm.ASSUMED["merge_job_s"]
    assert out.replaced_merges == 1
    assert [folds[id(m)] for m in measured[1:]] == [seconds, 2 * seconds, 2 * seconds]


def test_a_tiny_month_loses_no_selected_cell_in_the_new_design(mm, world):
    month, today, new = mm.simulate(world, seed=5, days=4, per_day=20, shared=0.2)
    assert len(month.pushes) > 40
    assert new.cancelled == new.lost_cells == 0 and new.lost_runner_s == 0.0
    assert new.selected_cells == new.folded_cells > 0
    assert today.cancelled > 0 and today.lost_cells > 0 and today.lost_runner_s > 0
    # A PR's base is never newer than its merge base in the new design.
    assert new.stale_commits and min(new.stale_commits) >= 0
    assert mm.ratio(world, today, new) < 1


def test_cost_is_monotone_in_pushes_per_day(mm, world):
    months, costs = [], []
    for rate in (2, 8, 24):
        month, today, new = mm.simulate(world, seed=7, days=5, per_day=rate, shared=0.1)
        months.append({(p.time, p.paths) for p in month.pushes})
        costs.append((sum(today.daily), sum(new.daily)))
    assert months[0] <= months[1] <= months[2]  # a higher rate adds pushes, never changes the others
    assert costs[0][0] <= costs[1][0] <= costs[2][0]
    assert costs[0][1] <= costs[1][1] <= costs[2][1]


def test_the_output_is_deterministic(mm, world):
    first = mm.table(world, *mm.simulate(world, seed=3, days=3, per_day=10, shared=0.1))
    second = mm.table(world, *mm.simulate(world, seed=3, days=3, per_day=10, shared=0.1))
    assert first == second


def test_pushes_select_what_bot_select_selects(mm, world):
    def chosen(kind, *paths, edit=None):
        return mm.select(world, mm.Push(1, 0.0, kind, paths, skiplist_edit=edit))

    llama = chosen("single-model", "src/transformers/models/llama/modeling_llama.py")
    assert "LlamaForCausalLM" in llama.classes and len(llama.walls) == min(4, len(llama.cells))
    assert chosen("shared", "src/transformers/modeling_utils.py").classes == frozenset(world.catalog.core)
    assert chosen("other-src", "src/transformers/trainer.py").cells == ()
    name, text = next((n, t) for n, t in world.skiplists if n.endswith("export_skips.toml"))
    line = next(i for i, row in enumerate(text.splitlines()) if row.startswith("VideoMAEForPreTraining ="))
    lifted = chosen("skiplist", name, edit=(name, line))
    # A lifted entry runs only the cells its scope covers, so no class counts as freshly measured whole.
    assert lifted.cells and lifted.classes == frozenset()
    assert {c.model_class for c in lifted.cells} == {"VideoMAEForPreTraining"}


def test_a_due_push_starts_the_sweep_at_once_and_a_burst_during_it_starts_one_more(mm, world):
    """docs/workflows.md, "When the due sweep starts": coalesced, never one sweep per push."""
    pushes = tuple(
        mm.Push(n + 1, 10 * mm.HOUR + n * 600, "shared", ("src/transformers/modeling_utils.py",)) for n in range(3)
    )
    out = mm.Outcome([0.0])
    first, second = mm._sweeps(world, mm.Month(1, pushes, (), ()), out)
    light, merge = mm.ASSUMED["light_job_s"], mm.ASSUMED["merge_job_s"]
    _, report_end = mm.sweep_jobs(world, 10 * mm.HOUR + light)
    # The first push's plan starts it; the two pushes during it wait for its merge, then share one.
    assert (first.commit, first.ready) == (1, report_end)
    assert second.commit == 3 and second.ready == mm.sweep_jobs(world, report_end + merge)[1]
    assert out.sweeps == 2
