"""No run leaves its pending behind: when its report is not the PR's latest, its own pending still ends."""

from __future__ import annotations

from tests.github.test_attempts import _comment_job, _upload_report

CONFORMANCE = "export-conformance.yml"


def _started(fake, gh) -> tuple[int, str]:
    head = fake.state.refs["heads/feature"]
    run = fake.add_run(CONFORMANCE, head_sha=head, branch="feature", event="pull_request", status="in_progress")
    assert gh("pending", event=fake.run_event(run, "in_progress")).exit_code == 0
    _upload_report(fake, run, "the first head", "success")
    return run, head


def test_a_skip_ci_push_meanwhile_leaves_no_pending_on_the_old_head(fake, gh, tmp_path):
    run, old = _started(fake, gh)
    # A `[skip ci]` push: the PR moves on and no run starts for the new head.
    fake.state.refs["heads/feature"] = fake.commit({"src/x.py": "x = 2\n"}, (old,), "typo [skip ci]")
    fake.finish_run(run, "success")
    result = _comment_job(fake, gh, tmp_path, fake.run_event(run, "completed"), "r")
    assert result.exit_code == 0, result.output
    last = fake.state.statuses[old][-1]
    assert (last["state"], last["target_url"].rsplit("/runs/", 1)[1]) == ("success", f"{run}/attempts/1")
    assert fake.state.refs["heads/feature"] not in fake.state.statuses  # the new head: "Expected", as documented


def test_a_sticky_holding_a_newer_runs_report_leaves_no_pending_on_this_runs_head(fake, gh, tmp_path):
    run, old = _started(fake, gh)
    new = fake.state.refs["heads/feature"] = fake.commit({"src/x.py": "x = 3\n"}, (old,), "push")
    newer = fake.add_run(CONFORMANCE, head_sha=new, branch="feature", event="pull_request", status="in_progress")
    _upload_report(fake, newer, "the new head", "success")
    fake.finish_run(newer, "success")
    assert _comment_job(fake, gh, tmp_path, fake.run_event(newer, "completed"), "n").exit_code == 0
    fake.finish_run(run, "success")  # the older run reports last: the sticky keeps the newer report
    result = _comment_job(fake, gh, tmp_path, fake.run_event(run, "completed"), "o")
    assert result.exit_code == 0, result.output
    assert "The new head." in fake.bot_comments(1)[0]["body"]
    assert fake.state.statuses[old][-1]["state"] == "success"
    assert fake.state.statuses[new][-1]["target_url"].endswith(f"/{newer}/attempts/1")
