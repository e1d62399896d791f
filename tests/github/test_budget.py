"""The API budget: requests per job kind, counted by the fake GitHub seeded at Transformers' traffic.

GITHUB_TOKEN may make 1,000 REST requests an hour per repository, shared by every workflow
(docs/github.md, "The API budget"). Each job runs once against a repository that keeps three months
of sweeps' artifacts (hundreds named `export-baseline` and `export-measurement`) and a window of
recent runs that uploaded none (pushes that ran no cell): a listing that falls back run by run, or
a new loop over runs, goes over its job's bound here.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.github.conftest import comment_event
from tests.github.test_pending import _event
from tests.github.test_transient import JOBS

# What a day at Transformers looks like (docs/github.md): merges to main, pushes to PRs, commands.
MERGES, PR_PUSHES, COMMANDS, NIGHTLY = 20, 100, 30, 1
BACKLOG_DAYS = 90  # the state artifacts' retention (baseline.yml)
RECENT_RUNS = 70  # runs of the last three days that uploaded nothing: they fill every job's scan window (60)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def seed_transformers(fake) -> int:
    """Three months of sweeps on main, each with its state and measurement artifacts, made when its run
    was; then the recent runs that uploaded nothing. Returns how many artifacts are within retention."""
    now = datetime.now(timezone.utc)
    main = fake.state.refs["heads/main"]
    junk = b"PK\x05\x06" + b"\0" * 18  # an empty zip: outside every scan window, so never downloaded
    for day in range(BACKLOG_DAYS, 3, -1):
        for push in range(MERGES // 4 + NIGHTLY):
            created = _stamp(now - timedelta(days=day, hours=push))
            run_id = fake.add_run(
                "export-baseline.yml",
                head_sha=main,
                event="schedule" if push == 0 else "push",
                artifacts={"export-baseline": junk, "export-measurement": junk},
            )
            fake.run(run_id)["created"] = created
            for aid in fake.run(run_id)["artifacts"]:
                fake.state.artifacts[aid]["created"] = created
    for index in range(RECENT_RUNS, 0, -1):
        run_id = fake.add_run("export-baseline.yml", head_sha=main, event="push")
        fake.run(run_id)["created"] = _stamp(now - timedelta(hours=index))
    return len(fake.state.artifacts)


def _pending(fake, gh, tmp_path):
    result = gh("pending", event=_event(fake, 40, "requested"))
    return result, bool(fake.state.statuses.get(fake.state.refs["heads/feature"]))


def _command(fake, gh, tmp_path):
    result = gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check"))
    return result, len(fake.state.dispatches) == 1


def _obsolete_skips(fake, gh, tmp_path):
    """The third night in which a skipped cell passes (counted alone): it opens the obsolete-skip PR."""
    from tests.github.test_obsolete_skips import BRANCH, GDINO, _night

    for _ in range(2):
        _night(fake, gh, [GDINO])
    fake.requests.clear()
    _, result = _night(fake, gh, [GDINO])
    return result, any(pr["head_ref"] == BRANCH for pr in fake.state.pulls.values())


def _reports(fake, gh, tmp_path):
    """The dashboard's history, as a sweep's own job asks for it (its run id: it also looks for a newer sweep)."""
    from tests.github.conftest import make_report, report_zip

    main = fake.state.refs["heads/main"]
    report = report_zip(make_report(head_sha=main))
    fake.add_run("export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-sweep": report})
    this_run = fake.add_run("export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-sweep": report})
    out = tmp_path / "history"
    result = gh("reports", "--artifact", "export-sweep", "--out", str(out), env={"GITHUB_RUN_ID": str(this_run)})
    return result, len(list(out.iterdir())) == 1


def _track(fake, gh, tmp_path):
    """The tracking issue edited in place (its dearest path: list, culprit's PR, the second look, the edit)."""
    from bot.results.baseline_json import dumps
    from tests.conftest import SKIPLISTS
    from tests.github.test_track import BERT_BROKEN_BY_PUSH, GPT, SHAS, state

    def track(baseline):
        path = tmp_path / "baseline.json"
        path.write_text(dumps(baseline), encoding="utf-8")
        return gh("track", "--state", str(path), "--skiplists", str(SKIPLISTS))

    track(state(BERT_BROKEN_BY_PUSH))
    fake.requests.clear()
    result = track(state({**BERT_BROKEN_BY_PUSH, GPT: [(SHAS[7], False, "push"), (SHAS[6], True, "push")]}, pushes=8))
    return result, "tracking issue updated" in result.output


KINDS = {
    **JOBS,
    "reports": _reports,
    "obsolete-skips": _obsolete_skips,
    "pending": _pending,
    "command": _command,
    "track": _track,
}

# The most requests each job kind may make against the seeded repository (measured, with a little room):
# a loop over runs adds tens. docs/github.md's table gives the measured figures.
BOUNDS = {
    "baseline": 8,  # measured 7: three run listings (one per sweep event), two artifact listings, a download;
    # made once per conformance run, by its select job (report downloads its export-base artifact)
    "reports": 11,  # measured 8: the history and the look for a newer sweep (docs/github.md, "Main's state")
    "obsolete-skips": 29,  # measured 28
    "apply": 24,  # measured 22
    "comment": 8,  # measured 8
    "pending": 3,  # measured 2
    "command": 5,  # measured 4
    "track": 10,  # measured 8: the bot's issues, two culprits' PRs and commit authors, the second look, the edit
}
# Name-filtered artifact listings (pages) each job kind may read: one page per name, but the
# obsolete-skip job's history reaches back K nights of `schedule` runs, about two pages a name.
PAGES = {"obsolete-skips": 4}
# actions/download-artifact's own requests in the comment job (list the run's artifacts by name, download).
DOWNLOAD_ARTIFACT = 2
# The report job's own request: GitHub's compare names the PR's merge base (`github merge-base`).
MERGE_BASE = 1


def busiest_hour(per_job: dict[str, int], share: int = 5) -> dict[str, tuple[int, int]]:
    """Job kind → (requests per run, runs in the busiest hour): a `share`th of a day's pushes, merges
    and commands in one hour (a fifth: the day's work crowded into five hours), the nightly sweep too."""
    part = lambda n: -(-n // share)  # noqa: E731
    pushes, merges, commands = part(PR_PUSHES), part(MERGES), part(COMMANDS)
    runs = commands + pushes  # a command dispatches a conformance run, which reports like a push's
    return {
        # Main's state is fetched once per run, by select, and handed to report as a run artifact
        # (the Actions runtime's token, not the REST API's): report asks only for the merge base.
        "conformance select (`github baseline`)": (per_job["baseline"], runs),
        "conformance report (merge base)": (MERGE_BASE, runs),
        "pending (`requested`, `in_progress`)": (per_job["pending"], 2 * runs),
        "comment (with download-artifact)": (per_job["comment"] + DOWNLOAD_ARTIFACT, runs),
        "command": (per_job["command"], commands),
        "apply (one of the hour's commands)": (per_job["apply"], 1),
        "baseline plan and merge (`github baseline` twice)": (2 * per_job["baseline"], merges + NIGHTLY),
        "track": (per_job["track"], merges + NIGHTLY),
        "obsolete-skips": (per_job["obsolete-skips"], NIGHTLY),
        "reports (dashboard)": (per_job["reports"], NIGHTLY),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_each_job_kind_stays_within_its_request_bound_at_transformers_traffic(fake, gh, tmp_path, kind):
    assert seed_transformers(fake) > 500
    fake.requests.clear()
    result, done = KINDS[kind](fake, gh, tmp_path)
    assert result.exit_code == 0 and done, result.output
    made = len(fake.requests)
    listings = [path for method, path in fake.requests if path.endswith("/actions/artifacts")]
    pages = PAGES.get(kind, 2)
    assert len(listings) <= pages, f"{kind}: {len(listings)} name-filtered listings, over its {pages} pages"
    assert made <= BOUNDS[kind], f"{kind} made {made} requests, over its bound of {BOUNDS[kind]}:\n" + "\n".join(
        f"{m} {p}" for m, p in fake.requests
    )


def test_the_busiest_hour_at_transformers_traffic_fits_the_token_budget():
    """Every job at its bound, a fifth of a day's traffic in one hour: under 1,000 with a margin."""
    hour = busiest_hour(BOUNDS)
    total = sum(requests * runs for requests, runs in hour.values())
    assert total < 900, f"{total} requests in the busiest hour: less than a tenth of GITHUB_TOKEN's 1,000 to spare"
    # Select's footprints cost a PR run nothing: its one fetch moved from report, none was added.
    conformance = [requests for job, (requests, _) in hour.items() if job.startswith("conformance ")]
    assert sum(conformance) == BOUNDS["baseline"] + MERGE_BASE, hour
