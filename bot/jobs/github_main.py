"""The GitHub jobs of the default branch's sweep: main's baseline, the earlier sweeps' reports, the obsolete-skip PR
and the tracking issue of main's regressions. The command line's side of the same jobs: bot/cli/github_main.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bot.diff.model import Report, load_report
from bot.errors import BotError
from bot.files import read_text, write_text
from bot.jobs.github import JobOutcome
from bot.publish import tracking
from bot.publish.baseline import Caps, download_baseline, start_sweep, unfinished_sweeps
from bot.publish.github_api import GitHubClient
from bot.publish.obsolete_skips import (
    Evidence,
    PullOptions,
    current_report_json,
    history_json,
    newer_sweep,
    obsolete_files,
    render_body,
    sync_pull_request,
    title_for,
)
from bot.publish.tracking import TITLE, Origin
from bot.results.baseline import Baseline, chain, pending_due, sweep_start
from bot.results.baseline_json import loads
from bot.skiplist.model import load_skiplists


def baseline_job(
    client: GitHubClient,
    workflow: str,
    artifact: str,
    branch: str,
    out: Path,
    caps: Caps,
    *,
    keep: int = 10,
    scan: int = 60,
) -> JobOutcome:
    """Main's state, folded from the newest state artifacts and the measurements not yet in them, into `out/baseline.json`."""

    found = download_baseline(client, workflow, out, name=artifact, branch=branch, caps=caps, keep=keep, scan=scan)
    if found is None:
        notice = f"no baseline yet: no {workflow} run of {client.repository} on {branch} has {artifact}"
        return JobOutcome(("no baseline yet",), outputs=(("found", "false"),), annotations=(("notice", notice),))
    order = chain(found.state)
    sha = order[-1] if order else (found.states or found.measurements)[0].head_sha
    lines = [
        f"baseline of main@{sha[:12]} in {out / 'baseline.json'}: {len(found.state.cells)} cells, "
        f"{len(found.states)} state(s) (runs {', '.join(str(r.id) for r in found.states) or 'none'}) "
        f"and {len(found.measurements)} measurement(s) not yet in them"
    ]
    if found.converted:
        lines.append(f"version-1 baseline(s) of run(s) {', '.join(map(str, found.converted))} converted")
    return JobOutcome(tuple(lines), outputs=(("found", "true"), ("sha", sha)))


def reports_job(
    client: GitHubClient, workflow: str, artifact: str, *, branch: str, count: int, run_id: int, out: Path, caps: Caps
) -> JobOutcome:
    """The report.json of the last `count` sweeps before this one, into `out/sweep-NNN/` (oldest first);
    output `superseded` is `true` when a newer sweep already has its report, so this one's dashboard,
    older, is not deployed over it (docs/github.md, "Main's state")."""

    found = history_json(client, workflow, artifact, branch=branch, count=count, exclude_run=run_id, caps=caps)
    # Folder names keep the order, for reports without `created`.
    for index, (_run, data) in enumerate(found):
        write_text(out / f"sweep-{index:03d}" / "report.json", json.dumps(data, ensure_ascii=False))
    lines = [f"{len(found)} earlier {workflow} reports in {out}"]
    newer = newer_sweep(client, workflow, artifact, branch=branch, run_id=run_id) if run_id else None
    if newer is not None:
        lines.append(f"superseded: sweep run {newer.id}, newer than this one, has its report: its dashboard stands")
    return JobOutcome(tuple(lines), outputs=(("superseded", "true" if newer else "false"),))


@dataclass(frozen=True)
class ObsoleteInputs:
    workflow: str
    artifact: str
    report_path: Path | None
    run_id: int
    min_passes: int
    branch: str
    skiplists_dir: Path
    skiplists_path: str
    run_url: str | None
    server_url: str
    dispatch: str | None = None  # the conformance workflow to start for the PR's head
    options: PullOptions = PullOptions()  # a new PR's labels, reviewers and draft state


def obsolete_skips_job(client: GitHubClient, given: ObsoleteInputs, caps: Caps) -> JobOutcome:
    """Propose with the probe history, then open, update or close the one obsolete-skip PR."""

    k = given.min_passes
    if given.report_path:
        report = load_report(given.report_path)
    else:
        data = current_report_json(client, given.run_id, given.artifact, caps=caps)
        report = Report.from_json(data, where=f"run {given.run_id}'s {given.artifact}")
    earlier = history_json(
        client, given.workflow, given.artifact, branch=given.branch, count=k - 1, exclude_run=given.run_id, caps=caps
    )
    history = [Report.from_json(d, where=f"{given.artifact} of run {run.id}") for run, d in earlier]
    edits = obsolete_files(report, history, given.skiplists_dir, min_passes=k)
    entries = [e.to_json() for e in edits]
    body = render_body(entries, min_passes=k, runs=evidence_runs(client, earlier, given, report.run_url))
    short = None
    if len(history) < k - 1:
        short = f"{len(history)} earlier sweep(s) found of the {k - 1} a removal needs, so nothing could be judged"
    done = sync_pull_request(
        client,
        edits,
        body,
        title=title_for(entries),
        base=given.branch,
        folder=given.skiplists_path,
        dispatch=given.dispatch,
        short_history=short,
        options=given.options,
    )
    return JobOutcome((done,))


def evidence_runs(client: GitHubClient, earlier, given: ObsoleteInputs, report_url: str | None):
    """The K runs that are the evidence: the earlier sweeps, then this one. This run's page comes from
    its id (GITHUB_RUN_ID); the report's own URL only when there is no id (the report is data)."""

    own = f"{given.server_url.rstrip('/')}/{client.repository}/actions/runs/{given.run_id}" if given.run_id else ""
    this_url = given.run_url or own or report_url or ""
    return [Evidence(run.id, run.url) for run, _ in earlier] + (
        [Evidence(given.run_id, this_url)] if given.run_id else []
    )


@dataclass(frozen=True)
class TrackInputs:
    state: Path  # baseline.json
    skiplists: Path  # the default branch's skiplist folder: a skiplisted cell is no regression
    report: Path | None  # this run's report.json: its failure groups carry culprit lines and hints
    bot_login: str  # the token's user: only issues it opened are the tracking issue
    repository_url: str | None  # links point only into this repository
    mentions: bool = False  # `@`-mention the culprit's author and merger (the `mention-culprits` setting)


def track_job(client: GitHubClient, given: TrackInputs) -> JobOutcome:
    """Create, edit in place, or close the tracking issue; outputs `issue`, `regressions` and `bisect`."""

    baseline = loads(read_text(given.state), where=str(given.state))
    # A skiplisted cell is no regression: the skip already accepts the break.
    found = tracking.regressions(baseline, load_skiplists(given.skiplists).skipped)
    groups = _report_groups(given.report)
    doubts = {r.cell.id: d for r in found if (d := tracking.unsettled(r, baseline.cells[r.cell])) is not None}
    causes = tracking.causes_of(found, groups, doubts)
    commits = tracking.chain(baseline)
    newest = commits[-1] if commits else None
    own = tracking.tracking_issues(client.issues_by(given.bot_login), given.bot_login)
    body = None
    if causes:
        culprits = {c.culprit: _culprit_of(client, c.culprit) for c in causes if c.culprit}
        body = tracking.render_issue(
            causes,
            culprits,
            repository_url=given.repository_url,
            newest=newest,
            mentions=given.mentions,
            state=tracking.state_run(baseline),
        )
    plan = tracking.plan_issue(own, body)
    newer = _newer_writer(client, plan, tracking.state_run(baseline))
    if newer is not None:
        return JobOutcome((f"{len(found)} regressions on main in {len(causes)} causes", newer))
    number, line = _act(client, plan, body, given.bot_login, tracking.closing_comment(newest))
    lines = [line]
    for duplicate in plan.duplicates:
        # Two jobs can both find none and both open one: the oldest stays, the others are closed.
        client.create_comment(duplicate, f"Duplicate of #{plan.number}: closing.")
        client.edit_issue(duplicate, state="closed", state_reason="not_planned")
        lines.append(f"#{duplicate}: a duplicate tracking issue, closed")
    outputs = (
        ("issue", str(number or "")),
        ("regressions", str(len(found))),
        # A break the bisect's re-runs disputed is not bisected again until main's results move its ends.
        ("bisect", "true" if any(r.culprit is None and r.cell.id not in doubts for r in found) else "false"),
    )
    return JobOutcome((f"{len(found)} regressions on main in {len(causes)} causes", *lines), outputs=outputs)


def _newer_writer(client: GitHubClient, plan, ours: int) -> str | None:
    """Compare before the swap: the issue is read again just before it is edited or closed, and a job
    whose state is older than the one that wrote it now writes nothing (no concurrency group needed)."""
    if plan.action not in ("edit", "close"):
        return None
    theirs = tracking.overtaken(client.issue(plan.number).body, ours)
    if theirs is None:
        return None
    return (
        f"#{plan.number}: superseded: a job with a newer state of main (run {theirs}, this one's is run {ours}) "
        "wrote the tracking issue; left as it wrote it"
    )


def _report_groups(path: Path | None) -> tuple:
    if path is None:
        return ()

    return load_report(path).groups


def _culprit_of(client: GitHubClient, sha: str) -> Origin:
    """The PR that brought `sha` to main (a merged one, or none) and who wrote and merged it.

    GitHub lists open PRs that hold a commit beside the one that merged it, and only open ones
    for a commit pushed to main directly: anyone can open a PR holding main's commit, so an
    open PR is never named (its title would speak in the issue, and it would take the blame).
    """
    merged = next((p for p in client.commit_pulls(sha) if p.merged), None)
    if merged is None:
        # Pushed to main directly: no PR, no merger; its author is the commit's (as upstream's
        # utils/check_bad_commit.py falls back to it).
        return Origin(None, client.commit_author(sha))
    # Who merged it is in the single-PR answer only (as upstream's utils/check_bad_commit.py reads it).
    pull = client.pull_request(merged.number)
    return Origin(pull, pull.author)


def _act(client: GitHubClient, plan, body: str | None, bot_login: str, closing: str) -> tuple[int | None, str]:
    """Carry out the plan: the issue it leaves open (None: none) and a line for the log."""

    if plan.action == "create":
        issue = client.create_issue(TITLE, body, creator=bot_login)
        return issue.number, f"#{issue.number}: tracking issue opened"
    if plan.action == "edit":
        client.edit_issue(plan.number, body=body)
        return plan.number, f"#{plan.number}: tracking issue updated"
    if plan.action == "close":
        client.create_comment(plan.number, closing)
        client.edit_issue(plan.number, state="closed", state_reason="completed")
        return None, f"#{plan.number}: every listed cell passes again or is skiplisted: closed"
    if plan.number is not None:
        return plan.number, f"#{plan.number}: tracking issue unchanged"
    return None, "no regression on main and no open tracking issue"


@dataclass(frozen=True)
class SweepInputs:
    state: Path  # main's baseline.json; absent: no state yet
    due: tuple[str, ...]  # this push's own reasons, not in the state yet (the plan job's `due=`)
    commit: str | None  # the push's commit, where its reasons are (a sweep there or later answered them)
    workflow: str  # the caller workflow, whose dispatch runs the full sweep
    branch: str  # the default branch
    run_id: int  # this run: never counted as a sweep already started


def sweep_job(client: GitHubClient, given: SweepInputs) -> JobOutcome:
    """Start the due sweep now (a dispatch of the caller with `full: true`), unless one already started covers it."""

    baseline = loads(read_text(given.state), where=str(given.state)) if given.state.exists() else Baseline()
    if given.due and not given.commit:
        raise BotError("--due needs --commit: name the push's commit its reasons are at (github.sha)")
    reasons = pending_due(baseline, [(given.commit, reason) for reason in given.due])
    unfinished = unfinished_sweeps(client, given.workflow, given.branch, exclude=given.run_id)
    decision = sweep_start(reasons, [run.id for run in unfinished], baseline.runs)
    if not decision.start:
        return JobOutcome((f"no sweep started: {decision.why}",), outputs=(("started", "false"),))
    run = start_sweep(client, given.workflow, given.branch, {run.id for run in unfinished})
    started = f"run {run.id}" if run else "a run"
    line = f"sweep started ({given.workflow} on {given.branch}, full: true), {started}, for: {decision.why}"
    return JobOutcome((line,), outputs=(("started", "true"),))
