"""The `github track` job: read main's baseline, list its regressions in the one tracking issue, close it when none is left."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from bot.publish.github_api import GitHubClient, PullRequest
from bot.publish.jobs import JobOutcome

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrackInputs:
    state: Path  # baseline.json
    skiplists: Path  # the default branch's skiplist folder: a skiplisted cell is no regression
    report: Path | None  # this run's report.json: its failure groups carry culprit lines and hints
    bot_login: str  # the token's user: only issues it opened are the tracking issue
    repository_url: str | None  # links point only into this repository


def track_job(client: GitHubClient, given: TrackInputs) -> JobOutcome:
    """Create, edit in place, or close the tracking issue; outputs `issue`, `regressions` and `bisect`."""
    from bot.files import read_text
    from bot.publish import tracking
    from bot.results.baseline_json import loads
    from bot.skiplist.model import load_skiplists

    baseline = loads(read_text(given.state), where=str(given.state))
    # A skiplisted cell is no regression: the skip already accepts the break.
    found = tracking.regressions(baseline, load_skiplists(given.skiplists).skipped)
    groups = _report_groups(given.report)
    causes = tracking.causes_of(found, groups)
    commits = tracking.chain(baseline)
    newest = commits[-1] if commits else None
    own = tracking.tracking_issues(client.issues_by(given.bot_login), given.bot_login)
    body = None
    if causes:
        pulls = {c.culprit: _pull_of(client, c.culprit) for c in causes if c.culprit}
        body = tracking.render_issue(causes, pulls, repository_url=given.repository_url, newest=newest)
    plan = tracking.plan_issue(own, body)
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
        ("bisect", "true" if any(r.culprit is None for r in found) else "false"),
    )
    return JobOutcome((f"{len(found)} regressions on main in {len(causes)} causes", *lines), outputs=outputs)


def _report_groups(path: Path | None) -> tuple:
    if path is None:
        return ()
    from bot.diff.model import load_report

    return load_report(path).groups


def _pull_of(client: GitHubClient, sha: str) -> PullRequest | None:
    """The PR that brought `sha` to main: a merged one, or none.

    GitHub lists open PRs that hold a commit beside the one that merged it, and only open ones
    for a commit pushed to main directly: anyone can open a PR holding main's commit, so an
    open PR is never named (its title would speak in the issue, and it would take the blame).
    """
    return next((p for p in client.commit_pulls(sha) if p.merged), None)


def _act(client: GitHubClient, plan, body: str | None, bot_login: str, closing: str) -> tuple[int | None, str]:
    """Carry out the plan: the issue it leaves open (None: none) and a line for the log."""
    from bot.publish.tracking import TITLE

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
