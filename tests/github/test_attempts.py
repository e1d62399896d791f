"""Re-run attempts and runs awaiting approval, as the fake GitHub serves them, through the pending and comment jobs."""

from __future__ import annotations

import dataclasses
import io
import json
import urllib.request
import zipfile

import pytest

from tests.github.conftest import make_report, report_zip
from tests.github.fake_github import ArtifactConflict
from tests.test_workflows import REUSABLE, load

CONFORMANCE = "export-conformance.yml"


def _rest(fake, method: str, path: str) -> tuple[int, dict]:
    request = urllib.request.Request(
        fake.api(path),
        method=method,
        headers={"Authorization": f"token {fake.token}"},
        data=b"" if method == "POST" else None,
    )
    with urllib.request.urlopen(request) as answer:
        data = answer.read()
        return answer.status, json.loads(data) if data else {}


def _download_report(fake, run_id: int, dest):
    """actions/download-artifact v4 with `run-id` and `name: export-report`, as the comment job runs it."""
    _, listed = _rest(fake, "GET", f"/actions/runs/{run_id}/artifacts")
    [artifact] = [a for a in listed["artifacts"] if a["name"] == "export-report"]
    with urllib.request.urlopen(
        urllib.request.Request(artifact["archive_download_url"], headers={"Authorization": f"token {fake.token}"})
    ) as answer:
        zipfile.ZipFile(io.BytesIO(answer.read())).extractall(dest)
    return dest / "report.json"


def _upload_report(fake, run_id: int, headline: str, verdict: str) -> None:
    """The report job's upload, as conformance.yml's step says it (`overwrite` included)."""
    [upload] = [
        s["with"]
        for s in load(REUSABLE / "conformance.yml")["jobs"]["report"]["steps"]
        if s.get("uses", "").startswith("actions/upload-artifact@")
    ]
    report = make_report(head_sha=fake.state.refs["heads/feature"], verdict=verdict, headline=headline)
    # The report job's --run-url names the attempt (`github.run_attempt`), as conformance.yml passes it.
    url = f"{fake.repo['html_url']}/actions/runs/{run_id}/attempts/{fake.run(run_id)['attempt']}"
    report = dataclasses.replace(report, run_url=url)
    fake.upload_artifact(run_id, upload["name"], report_zip(report), overwrite=upload.get("overwrite", False))


def _status(fake) -> tuple[str, str, str]:
    last = fake.state.statuses[fake.state.refs["heads/feature"]][-1]
    return last["state"], last["target_url"].rsplit("/runs/", 1)[1], last["description"]


def _comment_job(fake, gh, tmp_path, event: dict, name: str):
    dest = tmp_path / name
    dest.mkdir()
    return gh("comment", "--report", str(_download_report(fake, event["workflow_run"]["id"], dest)), event=event)


def test_a_rerun_is_the_same_run_at_the_next_attempt_and_the_attempt_before_stays_readable(fake):
    run = fake.add_run(CONFORMANCE, head_sha=fake.state.refs["heads/feature"], branch="feature", conclusion="failure")
    assert _rest(fake, "POST", f"/actions/runs/{run}/rerun")[0] == 201
    _, now = _rest(fake, "GET", f"/actions/runs/{run}")
    _, before = _rest(fake, "GET", f"/actions/runs/{run}/attempts/1")
    assert (now["id"], now["run_attempt"], now["status"], now["conclusion"]) == (run, 2, "queued", None)
    assert now["previous_attempt_url"].endswith(f"/actions/runs/{run}/attempts/1")
    assert (before["id"], before["run_attempt"], before["conclusion"]) == (run, 1, "failure")
    # A run still going cannot be re-run.
    with pytest.raises(urllib.error.HTTPError) as refused:
        _rest(fake, "POST", f"/actions/runs/{run}/rerun")
    assert refused.value.code == 403


def test_an_upload_of_a_name_the_run_holds_fails_unless_it_overwrites(fake):
    """upload-artifact v4: a name is unique in a run, across attempts; `overwrite` replaces it."""
    run = fake.add_run(CONFORMANCE, head_sha="a" * 40)
    first = fake.upload_artifact(run, "export-report", b"attempt 1")
    fake.rerun(run)
    with pytest.raises(ArtifactConflict, match="already exists on the workflow run"):
        fake.upload_artifact(run, "export-report", b"attempt 2")
    second = fake.upload_artifact(run, "export-report", b"attempt 2", overwrite=True)
    held = [a for a in fake.state.artifacts.values() if a["run"] == run]
    assert second != first and held == [{"name": "export-report", "run": run, "data": b"attempt 2", "expired": False}]


def test_a_rerun_sets_pending_again_and_its_comment_posts_its_own_report(fake, gh, tmp_path):
    run = fake.add_run(
        CONFORMANCE, head_sha=fake.state.refs["heads/feature"], branch="feature", event="pull_request", status="queued"
    )
    assert gh("pending", event=fake.run_event(run, "requested")).exit_code == 0
    fake.run(run)["status"] = "in_progress"
    late_progress = fake.run_event(run, "in_progress")  # attempt 1's, delivered only after attempt 2 started
    _upload_report(fake, run, "attempt one", "failure")
    fake.finish_run(run, "failure")
    late_completion = fake.run_event(run, "completed")
    result = _comment_job(fake, gh, tmp_path, late_completion, "a1")
    assert result.exit_code == 0, result.output
    assert _status(fake)[:2] == ("failure", f"{run}/attempts/1")

    assert _rest(fake, "POST", f"/actions/runs/{run}/rerun")[0] == 201
    assert gh("pending", event=fake.run_event(run, "requested")).exit_code == 0
    assert _status(fake) == ("pending", f"{run}/attempts/2", "export-conformance is running")
    # Attempt 1's events, late: attempt 2's pending stays, and its old report is not posted again.
    assert gh("pending", event=late_progress).exit_code == 0
    assert _comment_job(fake, gh, tmp_path, late_completion, "late").exit_code == 0
    assert _status(fake)[:2] == ("pending", f"{run}/attempts/2")

    _upload_report(fake, run, "attempt two", "success")  # a second upload of the name: overwrite
    fake.finish_run(run, "success")
    result = _comment_job(fake, gh, tmp_path, fake.run_event(run, "completed"), "a2")
    assert result.exit_code == 0, result.output
    assert _status(fake)[:2] == ("success", f"{run}/attempts/2")
    [sticky] = fake.bot_comments(1)
    assert "Attempt two." in sticky["body"] and "Attempt one." not in sticky["body"]
    # Attempt 1's completion once more, after attempt 2's verdict: the verdict and the comment stay.
    assert _comment_job(fake, gh, tmp_path, late_completion, "later").exit_code == 0
    assert _status(fake)[:2] == ("success", f"{run}/attempts/2")
    assert "Attempt two." in fake.bot_comments(1)[0]["body"]


FORK = "newcomer/Hello-World"


def test_a_first_time_contributors_run_says_it_waits_for_approval_then_running(fake, gh):
    """GitHub records the run `completed`/`action_required` until a maintainer approves it
    ("Approving workflow runs from public forks"): nothing runs, so the status must not say "running"."""
    head = "c" * 40
    fake.open_pull(9, "patch-1", fork=FORK, head_sha=head, user="newcomer")
    run = fake.add_run(
        CONFORMANCE,
        head_sha=head,
        branch="patch-1",
        event="pull_request",
        head_repo=FORK,
        status="completed",
        conclusion="action_required",
    )
    _, served = _rest(fake, "GET", f"/actions/runs/{run}")
    assert (served["status"], served["conclusion"]) == ("completed", "action_required")
    _, listed = _rest(fake, "GET", f"/actions/workflows/{CONFORMANCE}/runs?status=action_required")
    assert [r["id"] for r in listed["workflow_runs"]] == [run]
    result = gh("pending", event=fake.run_event(run, "requested"))
    assert result.exit_code == 0, result.output
    [waiting] = fake.state.statuses[head]
    assert waiting["state"] == "pending" and waiting["description"].startswith("waiting for a maintainer to approve")

    assert _rest(fake, "POST", f"/actions/runs/{run}/approve")[0] == 201
    fake.run(run)["status"] = "in_progress"
    assert gh("pending", event=fake.run_event(run, "in_progress")).exit_code == 0
    last = fake.state.statuses[head][-1]
    assert (last["state"], last["description"]) == ("pending", "export-conformance is running")
    # Approved once: the endpoint refuses a run that no longer waits.
    with pytest.raises(urllib.error.HTTPError) as refused:
        _rest(fake, "POST", f"/actions/runs/{run}/approve")
    assert refused.value.code == 403


def test_a_run_waiting_on_an_environments_reviewers_is_not_running(fake, gh):
    run = fake.add_run(
        CONFORMANCE, head_sha=fake.state.refs["heads/feature"], branch="feature", event="pull_request", status="waiting"
    )
    assert _rest(fake, "GET", f"/actions/runs/{run}")[1]["status"] == "waiting"
    _, listed = _rest(fake, "GET", f"/actions/workflows/{CONFORMANCE}/runs?status=waiting")
    assert [r["id"] for r in listed["workflow_runs"]] == [run]
    assert gh("pending", event=fake.run_event(run, "requested")).exit_code == 0
    assert _status(fake)[2].startswith("waiting for a maintainer to approve")
    fake.approve(run)
    assert gh("pending", event=fake.run_event(run, "in_progress")).exit_code == 0
    assert _status(fake)[::2] == ("pending", "export-conformance is running")


def test_a_rerun_that_uploaded_no_report_never_posts_the_attempt_befores(fake, gh, tmp_path):
    """Attempt 2's report job fails before its upload: attempt 1's `export-report` is still in the run
    (artifacts belong to the run), and the comment job must not post it as attempt 2's verdict."""
    [url] = [
        s["env"]["RUN_URL"]
        for s in load(REUSABLE / "conformance.yml")["jobs"]["report"]["steps"]
        if "RUN_URL" in s.get("env", {})
    ]
    assert url.endswith("/attempts/${{ github.run_attempt }}")
    run = fake.add_run(
        CONFORMANCE, head_sha=fake.state.refs["heads/feature"], branch="feature", event="pull_request", status="queued"
    )
    _upload_report(fake, run, "attempt one", "success")
    fake.finish_run(run, "success")
    assert _comment_job(fake, gh, tmp_path, fake.run_event(run, "completed"), "a1").exit_code == 0
    fake.rerun(run)
    assert gh("pending", event=fake.run_event(run, "requested")).exit_code == 0
    fake.finish_run(run, "failure")  # no upload this time
    result = _comment_job(fake, gh, tmp_path, fake.run_event(run, "completed"), "a2")
    assert result.exit_code == 2 and "attempt 1's, not this attempt's (2)" in result.output
    assert _status(fake) == (
        "error",
        f"{run}/attempts/2",
        "the run ended without a report: its log says why; re-run it",
    )
