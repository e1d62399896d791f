"""Transient failures at every read a job makes: retried when they pass, a re-run hint when they do not.

Each job is run once cleanly to list the reads it makes (by OpenAPI path template, and the
artifact store a download is redirected to); every one of them then fails, briefly or for good.
"""

from __future__ import annotations

import re

import pytest

from tests.github.conftest import comment_event, make_report, propose_on_feature, report_zip, zipped
from tests.github.payloads import workflow_run_event
from tests.github.routes import template_of
from tests.results.factory import Case, junit

BLOBS = "(the artifact store)"
KINDS = {  # how a read fails for a moment: GitHub's 502 and 503, and a connection dropped unanswered
    "502": dict(kind="status", status=502),
    "503": dict(kind="status", status=503),
    "reset": dict(kind="reset"),
    "truncated": dict(kind="truncate"),
}


def _baseline(fake, gh, tmp_path):
    main = fake.state.refs["heads/main"]
    xml = junit([Case("BertModel::test_onnx_export_static", status="passed")])
    fake.add_run(
        "export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-baseline": zipped({"b.xml": xml})}
    )
    out = tmp_path / "base"
    result = gh("baseline", "--out", str(out))
    return result, (out / "baseline.json").is_file()


def _apply(fake, gh, tmp_path):
    head = propose_on_feature(fake)
    result = gh("apply", event=comment_event(fake, "/export-check apply"))
    return result, fake.state.refs["heads/feature"] != head


def _comment(fake, gh, tmp_path):
    sha = fake.state.refs["heads/feature"]
    fake.state.comments[600] = {"issue": 1, "body": "a review", "user": "Codertocat", "created": "2026-01-01T00:00:00Z"}
    event = workflow_run_event(repo=fake.repo, run_id=9, head_sha=sha, pr_numbers=[1])
    path = tmp_path / "report.json"
    from bot.diff.model import write_report

    write_report(make_report(head_sha=sha), path)
    result = gh("comment", "--report", str(path), event=event, env={"GITHUB_RUN_ID": "9"})
    return result, len(fake.bot_comments(1)) == 1 and bool(fake.state.statuses.get(sha))


def _reports(fake, gh, tmp_path):
    main = fake.state.refs["heads/main"]
    report = report_zip(make_report(head_sha=main))
    fake.add_run("export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-baseline": report})
    out = tmp_path / "history"
    result = gh("reports", "--count", "5", "--out", str(out), env={"GITHUB_RUN_ID": "0"})
    return result, out.is_dir() and len(list(out.iterdir())) == 1


def _obsolete_skips(fake, gh, tmp_path):
    """Three nights in which a skipped cell passes: the third opens the obsolete-skip PR."""
    from tests.github.test_obsolete_skips import BRANCH, GDINO, _night

    for _ in range(3):
        _, result = _night(fake, gh, [GDINO])
        if result.exit_code != 0:
            break
    return result, any(pr["head_ref"] == BRANCH for pr in fake.state.pulls.values())


JOBS = {
    "baseline": _baseline,
    "reports": _reports,
    "apply": _apply,
    "comment": _comment,
    "obsolete-skips": _obsolete_skips,
}

# The reads each job makes, found by `test_the_reads_listed_are_every_read_the_job_makes`.
READS = {
    "baseline": [
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
        "/repos/{owner}/{repo}/actions/artifacts",
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
        BLOBS,
    ],
    "reports": [
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
        "/repos/{owner}/{repo}/actions/artifacts",
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
        BLOBS,
    ],
    "apply": [
        "/repos/{owner}/{repo}/collaborators/{username}/permission",
        "/repos/{owner}/{repo}/pulls/{pull_number}",
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
        "/repos/{owner}/{repo}/actions/artifacts",
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
        BLOBS,
        "/repos/{owner}/{repo}/contents/{path}",
        "/repos/{owner}/{repo}/git/commits/{commit_sha}",
        "/repos/{owner}/{repo}/git/ref/{ref}",
    ],
    "obsolete-skips": [
        "/repos/{owner}/{repo}/actions/runs/{run_id}",
        "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts",
        "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
        "/repos/{owner}/{repo}/actions/artifacts",
        "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}",
        BLOBS,
        "/repos/{owner}/{repo}/contents/{path}",
        "/repos/{owner}/{repo}/git/commits/{commit_sha}",
        "/repos/{owner}/{repo}/git/ref/{ref}",
        "/repos/{owner}/{repo}/pulls",
    ],
    "comment": [
        "/repos/{owner}/{repo}/pulls/{pull_number}",
        "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        "/repos/{owner}/{repo}/commits/{ref}/status",
    ],
}


def _reads(fake) -> set[str]:
    found = set()
    for method, path in fake.requests:
        if method == "GET":
            found.add(BLOBS if path.startswith("/_blobs/") else template_of(method, path))
    return found


def _pattern(template: str) -> str:
    """A regex for the request paths of `template` (the fake matches faults on the raw path)."""
    if template == BLOBS:
        return r"^/_blobs/"
    return (
        "^"
        + re.sub(r"\\\{(\w+)\\\}", lambda m: ".+" if m.group(1) in ("ref", "path") else "[^/]+", re.escape(template))
        + "$"
    )


@pytest.mark.parametrize("job", JOBS)
def test_the_reads_listed_are_every_read_the_job_makes(fake, gh, tmp_path, job):
    result, done = JOBS[job](fake, gh, tmp_path)
    assert result.exit_code == 0 and done, result.output
    assert _reads(fake) == set(READS[job])


# GitHub's 302 to the artifact store has no body to cut off.
CASES = [
    (job, read, kind)
    for job, reads in READS.items()
    for read in reads
    for kind in KINDS
    if not (kind == "truncated" and read.endswith("{archive_format}"))
]


@pytest.mark.parametrize("job,read,kind", CASES, ids=[f"{j}-{r.rsplit('/', 1)[-1]}-{k}" for j, r, k in CASES])
def test_a_read_that_fails_for_a_moment_is_retried(fake, gh, tmp_path, job, read, kind):
    fake.inject(method="GET", path=_pattern(read), times=2, **KINDS[kind])
    result, done = JOBS[job](fake, gh, tmp_path)
    assert result.exit_code == 0 and done, result.output
    assert not any(f.times for f in fake.faults), "the fault was never met: the read is not where the list says"


FOR_GOOD = [(job, read) for job, reads in READS.items() for read in reads]


@pytest.mark.parametrize("job,read", FOR_GOOD, ids=[f"{j}-{r.rsplit('/', 1)[-1]}" for j, r in FOR_GOOD])
def test_a_read_that_keeps_failing_says_it_is_transient_and_to_re_run(fake, gh, tmp_path, job, read):
    fake.inject("status", method="GET", path=_pattern(read), times=1000, status=503)
    result, done = JOBS[job](fake, gh, tmp_path)
    assert result.exit_code == 2 and not done, result.output
    assert "Traceback" not in result.output
    assert "delete the artifact" not in result.output and "corrupt" not in result.output
    assert "re-run" in result.output.lower(), result.output
