"""The `export-conformance` status while a run works: pending on start, never a stale pending or verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.publish.events import EventError, attempt_url, command_kind_of, command_pr_of, status_context
from bot.publish.github_api import CommitStatus, GitHubClient
from bot.publish.trust import fork_refusal

# A status links to its run's attempt (`…/actions/runs/<id>/attempts/<n>`, a page GitHub serves):
# a re-run keeps the run id, so only the attempt tells a re-run's pending from the verdict before it.
_RUN_URL = re.compile(r"/actions/runs/(\d+)(?:/attempts/(\d+))?(?:/|$)")
# GitHub names a merge queue's temporary branch gh-readonly-queue/<base>/pr-<number>-<head sha>.
_QUEUE_BRANCH = re.compile(r"^gh-readonly-queue/.+/pr-(\d+)-[0-9a-f]{40}$")
CANCELLED = "the run was cancelled before it reported: re-run it"
NO_REPORT = "the run ended without a report: its log says why; re-run it"
RUNNING = "export-conformance is running"
# A first-time contributor's run waits for a maintainer's approval (GitHub records it completed with
# `action_required`), and a run can wait on an environment's reviewers (`waiting`): neither is running.
AWAITING = "waiting for a maintainer to approve the run; nothing has run yet"


def run_of(url: str | None) -> tuple[int, int]:
    """The run and attempt a status links to ((0, 0) when it links to none): statuses are ordered by them.

    A link that names no attempt is the run's first (statuses set before attempts were named).
    """
    match = _RUN_URL.search(url or "")
    return (int(match.group(1)), int(match.group(2) or 1)) if match else (0, 0)


def report_attempt(report_url: str | None) -> int:
    """The run attempt a report names in its run link (`…/attempts/<n>`; one that names none is a first
    attempt's). Artifacts belong to the run, not to an attempt: when a re-run's report job fails before
    its upload, the attempt before's `export-report` is still there to download."""
    return run_of(report_url)[1] or 1


def queue_pr(head_branch: str | None) -> int | None:
    """The PR a merge-queue commit was made for, from the queue branch GitHub created for it."""
    match = _QUEUE_BRANCH.match(head_branch or "")
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class ConformanceRun:
    """The conformance run a `workflow_run` event is about, as GitHub recorded it (never from an artifact)."""

    id: int
    url: str
    action: str  # requested, in_progress, completed
    conclusion: str | None
    event: str  # what started it: pull_request, merge_group, workflow_dispatch
    head_sha: str
    title: str
    head_repo: str | None = None  # the repository its head came from: a fork's, for a fork PR
    attempt: int = 1  # `run_attempt`: a re-run keeps the id and counts up
    status: str | None = None  # GitHub's status of the run: queued, in_progress, waiting, completed

    @property
    def key(self) -> tuple[int, int]:
        return (self.id, self.attempt)

    @property
    def status_url(self) -> str:
        return attempt_url(self.url, self.attempt)

    @property
    def context(self) -> str:
        """The status it reports under: the gate's, or a part-of-the-PR command's own."""
        return status_context(self.event, command_kind_of(self.title))

    @classmethod
    def from_payload(cls, event: dict) -> ConformanceRun:
        run = event.get("workflow_run")
        if not isinstance(run, dict):
            raise EventError("not a workflow_run event: `export-bot github pending` runs on workflow_run")
        fields = {
            "id": (run.get("id"), int),
            "url": (run.get("html_url"), str),
            "action": (event.get("action"), str),
            "event": (run.get("event"), str),
            "head_sha": (run.get("head_sha"), str),
        }
        for name, (value, kind) in fields.items():
            if not isinstance(value, kind) or isinstance(value, bool):
                raise EventError(f"the workflow_run event has no valid `{name}`")
        conclusion = run.get("conclusion") if isinstance(run.get("conclusion"), str) else None
        title = run.get("display_title") if isinstance(run.get("display_title"), str) else ""
        head = run.get("head_repository")
        head_repo = head.get("full_name") if isinstance(head, dict) else None
        attempt = run.get("run_attempt")
        return cls(
            **{name: value for name, (value, _) in fields.items()},
            conclusion=conclusion,
            title=title or "",
            head_repo=head_repo if isinstance(head_repo, str) else None,
            attempt=attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else 1,
            status=run.get("status") if isinstance(run.get("status"), str) else None,
        )


def decide(run: ConformanceRun, current: CommitStatus | None, *, overtakes: bool = False) -> tuple[str, str] | None:
    """The (state, description) to set for this event, or None to leave the status as it is.

    A status names its run and attempt in its link; an older run or attempt never overwrites it, so
    a late or superseded run cannot replace a newer one's pending or verdict, and a re-run attempt
    replaces the verdict of the attempt before it with its own pending (docs/github.md, the state table).
    The one exception is `overtakes`: this run of the same commit started running after the newer run
    named there ended (a run that waited for approval, approved late), so it runs last and reports last.
    """
    holder = run_of(current.target_url) if current else (0, 0)
    if holder > run.key and not (overtakes and run.action == "in_progress"):
        return None
    if run.action in ("requested", "in_progress"):
        wanted = ("pending", AWAITING if _awaiting(run) else RUNNING)
        if holder == run.key and (current.state != "pending" or current.description == wanted[1]):
            return None  # already this attempt's, or (an event delivered late) its verdict
        return wanted
    if run.action == "completed" and run.conclusion in ("cancelled", "skipped"):
        # Only this attempt's own pending is cleared: a verdict or a newer run's status stays.
        if current and holder == run.key and current.state == "pending":
            return "error", CANCELLED
    return None


def _awaiting(run: ConformanceRun) -> bool:
    return run.status == "waiting" or run.conclusion == "action_required"


def ended_without_report(current: CommitStatus | None, run: tuple[int, int]) -> tuple[str, str] | None:
    """A run that finished and wrote no report ends its own pending with `error`; nothing else is touched.

    Only this attempt's pending: a verdict already set (the report was found after all) or a newer
    run's status stays. Without this, the required check would say "running" on a finished run.
    """
    if current is not None and current.state == "pending" and run_of(current.target_url) == run:
        return "error", NO_REPORT
    return None


def may_set_verdict(current: CommitStatus | None, run: tuple[int, int]) -> bool:
    """Whether a run attempt's verdict may replace the current status: not when a newer run or attempt set it."""
    return current is None or run_of(current.target_url) <= run


def commit_of(client: GitHubClient, event_name: str, head_sha: str | None, command_pr: int | None) -> str | None:
    """The commit a run's status belongs on: its head, or for a dispatched `/export-check` the PR's head.

    A dispatched run's head is the default branch; its title (the default branch's run-name) names
    the PR, read by the caller as `command_pr`.
    """
    if event_name != "workflow_dispatch":
        return head_sha
    return client.pull_request(command_pr).head_sha if command_pr else None


def _overtakes(client: GitHubClient, run: ConformanceRun, sha: str, current: CommitStatus | None) -> bool:
    """Whether this `in_progress` run takes the status from the newer run attempt that holds it: the two
    checked the same commit (this run's own head: a dispatched run's pinned head is not in its record),
    the holder's attempt has ended, and this attempt is running now (GitHub's record, not the event,
    which may come late). GitHub's concurrency group cancels the older of two runs that meet in it, so
    the one still running started last: an approval-gated run approved after the bot's dispatched one
    (docs/github.md, "Runs the bot's own pushes start")."""
    holder = run_of(current.target_url) if current else (0, 0)
    if run.action != "in_progress" or holder <= run.key or run.head_sha != sha or run.event == "workflow_dispatch":
        return False
    held_status, _ = client.run_attempt_state(*holder)
    if held_status != "completed":
        return False
    status, _ = client.run_attempt_state(run.id, run.attempt)
    return status == "in_progress"


def heads_elsewhere(client: GitHubClient, sha: str, head_repo: str | None) -> tuple[list[str], tuple[int, ...]]:
    """For a run from a fork: this repository's branches whose head is `sha`, and the open PRs from
    other repositories whose head it is and that were opened before the fork's own PR with that head
    (GitHub's PRs associated with the commit; the PR opened first owns its head, so a copy opened later
    can neither paint nor block it). Asked of GitHub only for a fork's run: a run of this repository's
    own branch cannot borrow another's head."""
    if head_repo == client.repository:
        return [], ()
    pulls = [p for p in client.commit_pulls(sha) if p.state == "open" and p.head_sha == sha]
    first = min((p.number for p in pulls if p.head_repo == head_repo), default=None)
    others = tuple(p.number for p in pulls if p.head_repo != head_repo and (first is None or p.number < first))
    return client.branches_at(sha), others


def update(client: GitHubClient, run: ConformanceRun) -> str:
    """Set the pending (or cancelled) status this event calls for; a line saying what was done."""
    sha = commit_of(client, run.event, run.head_sha, command_pr_of(run.title))
    if sha is None:
        return f"run {run.id} ({run.event}) names no pull request: no status"
    # A fork can push anyone's public commit to a branch of its own (bot/publish/trust.py).
    refused = fork_refusal(sha, run.head_repo, client.repository, *heads_elsewhere(client, sha, run.head_repo))
    if refused:
        return refused
    current = client.current_status(sha, context=run.context)
    decision = decide(run, current, overtakes=_overtakes(client, run, sha, current))
    if decision is None:
        return f"run {run.id} {run.action}: the {run.context} status on {sha[:12]} stays as it is"
    state, description = decision
    client.set_status(sha, state, description, run.status_url, context=run.context)
    return f"{run.context} {state} on {sha} ({run.status_url})"
