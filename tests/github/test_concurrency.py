"""The fake GitHub's concurrency groups, as GitHub documents them ("Control the concurrency of workflows and jobs")."""

from __future__ import annotations

from tests.github.fake_github import Concurrency


def test_a_busy_group_keeps_one_pending_run_and_cancels_the_older_pending_one(fake):
    runs = [fake.add_run("w.yml", head_sha="a" * 40, status="queued") for _ in range(3)]
    assert fake.arrive(runs[0], "g") == []
    assert fake.arrive(runs[1], "g") == []
    assert fake.arrive(runs[2], "g") == [runs[1]]
    states = {r["id"]: (r["status"], r["conclusion"]) for r in fake.state.runs}
    assert states == {runs[0]: ("in_progress", None), runs[1]: ("completed", "cancelled"), runs[2]: ("pending", None)}
    # When the running one ends, the pending one starts.
    assert fake.finish_run(runs[0], "success") == runs[2]
    assert {r["id"]: r["status"] for r in fake.state.runs}[runs[2]] == "in_progress"


def test_cancel_in_progress_replaces_the_running_run():
    groups = Concurrency()
    groups.arrive(1, "g", cancel_in_progress=True)
    groups.arrive(2, "g", cancel_in_progress=True)
    assert groups.cancelled == [1] and groups.running == {"g": 2}


def test_other_groups_and_runs_without_a_group_never_wait():
    groups = Concurrency()
    assert groups.arrive(1, "a")[0] == "in_progress"
    assert groups.arrive(2, "b")[0] == "in_progress"
    assert groups.arrive(3, None)[0] == "in_progress"
    assert groups.cancelled == []
