"""`export-bot github sweep`: a due reason starts the full sweep at once, and pushes in a row start one (docs/workflows.md)."""

from __future__ import annotations

from bot.results import ResultSet
from bot.results.baseline import Segment, fold, measured
from bot.results.baseline_json import dumps
from tests.github.conftest import outputs

P1, P2 = "1" * 40, "2" * 40
IMPORTS = "imports: src/transformers/modeling_layers.py reached 1,712 classes, 17 sampled"
SETTINGS = "settings: backends in [tool.export-bot]"


def state_file(tmp_path, *parts):
    path = tmp_path / "state" / "baseline.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(dumps(fold(*parts)), encoding="utf-8")
    return path


def push(commit, parent, run_id, due=()):
    segment = Segment(parent, (commit,), run_id)
    return measured(
        ResultSet(), commit=commit, time="2026-12-05T01:00:00Z", run_id=run_id, source="push", segment=segment, due=due
    )


def sweep_runs(fake):
    return [r for r in fake.state.runs if r["event"] == "workflow_dispatch"]


def test_pushes_in_a_row_start_one_sweep_and_its_merge_starts_the_next(fake, gh, tmp_path):
    fake.state.refs["heads/main"] = P1
    # The first push's plan: its own reason, not in the state yet; nothing under way → dispatched.
    args = ("--state", str(tmp_path / "none.json"), "--due", IMPORTS, "--commit", P1)
    result = gh("sweep", *args, env={"GITHUB_RUN_ID": "11"})
    assert result.exit_code == 0, result.output
    assert fake.state.dispatches == [{"workflow": "export-baseline.yml", "ref": "main", "inputs": {"full": "true"}}]
    assert outputs(gh.output)["started"] == "true"
    (first,) = sweep_runs(fake)
    # Its merge records the reason; the check there sees the sweep it started still to measure.
    state = state_file(tmp_path, push(P1, None, 11, due=(IMPORTS,)))
    result = gh("sweep", "--state", str(state), env={"GITHUB_RUN_ID": "11"})
    assert "no sweep started" in result.output and f"run {first['id']}" in result.output
    # A second push lands while it measures: the running sweep covers it, no second sweep overlaps.
    fake.state.refs["heads/main"] = P2
    first["status"] = "in_progress"
    state = state_file(tmp_path, push(P1, None, 11, due=(IMPORTS,)), push(P2, P1, 12))
    result = gh("sweep", "--state", str(state), "--due", SETTINGS, "--commit", P2, env={"GITHUB_RUN_ID": "12"})
    assert "no sweep started" in result.output and len(fake.state.dispatches) == 1
    # The sweep's own merge folds it (a full sweep at P1): P2's reason is left, so it starts the next.
    swept = measured(
        ResultSet(), commit=P1, time="2026-12-05T02:00:00Z", run_id=first["id"], source="sweep", segment=None, full=True
    )
    state = state_file(tmp_path, push(P1, None, 11, due=(IMPORTS,)), push(P2, P1, 12, due=(SETTINGS,)), swept)
    result = gh("sweep", "--state", str(state), env={"GITHUB_RUN_ID": str(first["id"])})
    assert result.exit_code == 0, result.output
    assert len(fake.state.dispatches) == 2 and f"{SETTINGS} (main@{P2[:7]})" in result.output
    assert sweep_runs(fake)[-1]["head_sha"] == P2


def test_nothing_due_and_a_finished_sweep_start_nothing(fake, gh, tmp_path):
    fake.state.refs["heads/main"] = P1
    fake.add_run("export-baseline.yml", head_sha=P1, event="workflow_dispatch")  # completed
    state = state_file(tmp_path, push(P1, None, 11))
    result = gh("sweep", "--state", str(state), env={"GITHUB_RUN_ID": "11"})
    assert result.exit_code == 0, result.output
    assert "no sweep due" in result.output and fake.state.dispatches == []
    assert outputs(gh.output)["started"] == "false"


def test_a_re_run_of_a_push_the_sweep_already_answered_starts_nothing(fake, gh, tmp_path):
    fake.state.refs["heads/main"] = P1
    swept = measured(
        ResultSet(), commit=P1, time="2026-12-05T02:00:00Z", run_id=20, source="sweep", segment=None, full=True
    )
    state = state_file(tmp_path, push(P1, None, 11, due=(IMPORTS,)), swept)
    result = gh("sweep", "--state", str(state), "--due", IMPORTS, "--commit", P1, env={"GITHUB_RUN_ID": "11"})
    assert result.exit_code == 0, result.output
    assert "no sweep due" in result.output and fake.state.dispatches == []
    # Reasons without the commit they are at cannot be weighed against the sweeps: refused.
    result = gh("sweep", "--state", str(state), "--due", IMPORTS)
    assert result.exit_code == 2 and "--due needs --commit" in result.output
