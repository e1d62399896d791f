"""The GitHub jobs of a finished conformance run: the PR's sticky comment, its status and check run, the merge
queue's verdict, and the end of a run that left no report (answering the `/export-check` that started it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from bot.errors import EXIT_USAGE, BotError
from bot.jobs.github import JobOutcome
from bot.publish import checks
from bot.publish.comment import MAX_COMMENT, stamp_length, status_description, upsert_sticky
from bot.publish.events import RunEvent
from bot.publish.github_api import STATUS_CONTEXT, GitHubClient, PullRequest, WorkflowRun
from bot.publish.pending import (
    commit_of,
    ended_without_report,
    heads_elsewhere,
    may_set_verdict,
    queue_pr,
    report_attempt,
    run_of,
)
from bot.publish.respond import finish_command
from bot.publish.trust import own_pulls, runs_workflow, status_refusal
from bot.report import COMMAND_MARKER, COMMAND_NOTE, COMMENT_MARKER, render_comment
from bot.results.baseline import to_instant


@dataclass(frozen=True)
class PostTarget:
    """The PRs a finished run reported on, found from GitHub's records, and the commit it checked."""

    sha: str | None
    pulls: tuple[PullRequest, ...]
    moved: str | None = None  # why nothing is posted: the PR a dispatched run named has a new head


def pulls_of_run(client: GitHubClient, event: RunEvent, report_sha: str | None, pr: int | None) -> PostTarget:
    """The commit and PRs a finished run reported on: from the event (GitHub's record of the run), never
    from the report alone. A dispatched run's report states its pinned head, checked against the PR's."""
    run = event.as_run()
    if pr:
        return PostTarget(event.head_sha or report_sha, (client.pull_request(pr),))
    if run is None:  # a direct `pull_request` run
        if not event.pr_numbers:
            raise BotError(f"no pull request in the event for {report_sha}; pass --pr")
        return PostTarget(event.head_sha, tuple(client.pull_request(n) for n in event.pr_numbers))
    if run.event == "workflow_dispatch" and run.head_repo == client.repository and event.command_pr:
        return _dispatched_target(client, event.command_pr, report_sha)
    return _run_target(client, run, event)


def _run_target(client: GitHubClient, run: WorkflowRun, event: RunEvent) -> PostTarget:
    """The open PRs GitHub ties to `run`; none, said, when those it lists were closed or merged since it
    started, or when no open PR has its commit as head any more (no one reads its report there)."""

    candidates = _candidates(client, run, event)
    found = own_pulls(run, candidates, client.repository)
    if found:
        return PostTarget(run.head_sha, found)
    closed = [p for p in candidates if p.number in run.pull_requests and p.state != "open"]
    if closed:
        moved = f"#{closed[0].number} is {closed[0].state}, so this run's report is not posted."
        return PostTarget(run.head_sha, (), moved)
    # GitHub lists the PRs whose head is the run's commit now: none once a push (a `[skip ci]` one
    # included) moved the head on. Nothing to post; the run's own pending on its commit still ends.
    return PostTarget(run.head_sha, (), f"no open pull request has head {run.head_sha} any more: nothing is posted")


def _dispatched_target(client: GitHubClient, command_pr: int, report_sha: str | None) -> PostTarget:
    """A dispatched run's PR, when its head is still the one the run checked (the report's pinned head).

    Its title (the default branch's `run-name`) names the PR; its commit is the default branch's.
    """
    pull = client.pull_request(command_pr)
    if report_sha and pull.head_sha == report_sha:
        return PostTarget(report_sha, (pull,))
    moved = f"#{pull.number} has a new head since this run checked {str(report_sha)[:12]}, so its report is not posted."
    return PostTarget(report_sha, (), moved)  # its own pending, set on that head, still ends


def _candidates(client: GitHubClient, run: WorkflowRun, event: RunEvent) -> list[PullRequest]:
    """The PRs a run may have reported on, before trust.own_pulls checks them against the run."""
    if run.pull_requests:
        return [client.pull_request(n) for n in run.pull_requests]
    if event.head_owner and event.head_branch:
        # A fork PR's run lists no pull request: its head owner and branch find it in one request.
        return client.pulls_from(event.head_owner, event.head_branch)
    return []


def comment_job(
    client: GitHubClient,
    event: RunEvent,
    report,
    *,
    pr: int | None = None,
    fallback_run_id: int = 0,
    bot_login: str,
    workflow: str = "export-conformance.yml",
    repository_url: str | None = None,
    dashboard_url: str | None = None,
    now: datetime | None = None,
) -> JobOutcome:
    """Post or update the sticky comment and the `export-conformance` status of the PRs a run reported on.

    The sticky is ordered by the conformance run that produced the report (the event's run id; a
    direct `pull_request` run is its own, `fallback_run_id`): a re-run of an old run keeps its id.
    With `dashboard_url`, each cell the comment names links to its history there. The cost line
    says how long the push took to reach the comment, from GitHub's record of the run (`now` − its creation).
    """

    run = event.as_run()
    if run is not None and not runs_workflow(run.path, workflow):
        return JobOutcome((f"ignored: a run of {run.path or 'an unknown workflow'}, not of {workflow}",))
    if run is not None and run.conclusion == "cancelled":
        return _cancelled(client, event)
    stated = report_attempt(report.run_url) if run is not None else event.run_attempt
    if stated > event.run_attempt:  # this attempt's completion, delivered after a re-run uploaded its report
        return JobOutcome((f"attempt {event.run_attempt}'s completion, late: the run's report is attempt {stated}'s",))
    if stated < event.run_attempt:
        why = f"the report.json in the run is attempt {stated}'s, not this attempt's ({event.run_attempt})"
        return missing_report_job(lambda: client, event, f"{why}: this attempt uploaded no report")
    rendering = {"repository_url": repository_url, "dashboard_url": dashboard_url, "elapsed": _since(event, now)}
    if run is not None and run.event == "merge_group" and run.head_repo == client.repository:
        return _queue_run(client, report, run, event.status_url, bot_login=bot_login, rendering=rendering)
    target = pulls_of_run(client, event, report.head_sha, pr)
    if not target.pulls:
        return _nothing_to_post(client, event, target, report)
    run_id = event.run_id if event.run_id is not None else fallback_run_id
    context = event.status_context
    body = _body(report, run_id, rendering, gate=context == STATUS_CONTEXT)
    lines = _post(
        client, report, body, target, run_id=run_id, run_url=event.status_url, bot_login=bot_login, context=context
    )
    if event.command_comment:
        lines += (_finish(client, event, reported=True, pulls=tuple(p.number for p in target.pulls)),)
    return JobOutcome(lines)


def _nothing_to_post(client: GitHubClient, event: RunEvent, target: PostTarget, report) -> JobOutcome:
    """No PR to post on (a dispatched run's PR moved on): said in the log, and to the command it answers;
    the run's own pending on the commit it checked ends with its verdict."""
    lines = (target.moved or "nothing to post",)
    if target.sha:
        lines += (_end_own_pending(client, target.sha, report, event.status_url, event.status_context),)
    if event.command_comment:
        lines += (_finish(client, event, reported=False, why=target.moved),)
    return JobOutcome(lines, annotations=(("notice", target.moved or ""),))


def _since(event: RunEvent, now: datetime | None) -> float | None:
    """Seconds from the run's creation (GitHub's record: the push) to `now`; None when the event has no record."""

    try:
        created = to_instant(event.created_at)
    except ValueError:
        return None
    return max((now or datetime.now(timezone.utc)) - created, timedelta(0)).total_seconds()


def _body(report, run_id: int, rendering: dict, *, gate: bool = True) -> str:
    """The sticky's text; `rendering` is render_comment's links and cost (links only into the workflow's own repository).

    A command run of part of the PR gets its own marker and says it is not the gate's verdict.
    """

    room = MAX_COMMENT - stamp_length(run_id) - (0 if gate else len(COMMAND_NOTE) + 2)
    body = render_comment(report, max_chars=room, **rendering)
    if gate:
        return body
    head, _, rest = body.removeprefix(COMMENT_MARKER).lstrip("\n").partition("\n")
    return f"{COMMAND_MARKER}\n{head}\n\n{COMMAND_NOTE}\n{rest}"


def _post(
    client: GitHubClient,
    report,
    body: str,
    target: PostTarget,
    *,
    run_id: int,
    run_url: str | None,
    bot_login: str,
    context: str = STATUS_CONTEXT,
):

    marker = COMMENT_MARKER if context == STATUS_CONTEXT else COMMAND_MARKER
    # A change that selects no cell (docs only) gets its status, not a comment: the sticky is only
    # updated where an earlier push of the PR posted one, so it never goes stale. A head that held no
    # cell where cells were expected is no such change: its comment says what JUnit was expected.
    create = bool(report.cells) or report.no_cells or context != STATUS_CONTEXT
    lines, settable = [], []
    holds = _holds_status(client, target.sha, run_url, context)
    for pull in target.pulls:
        sticky = upsert_sticky(
            client,
            pull.number,
            body,
            marker=marker,
            run_id=run_id,
            bot_login=bot_login,
            create=create,
            overtaken=holds and target.sha == pull.head_sha,
        )
        if sticky is not None:
            lines.append(f"#{pull.number}: comment {sticky.id}")
        else:
            lines.append(f"#{pull.number}: no cell ran, no comment")
        if sticky is not None and not sticky.ours:
            # The status follows the comment: an older run finishing late (a re-run keeps its run id)
            # must not put its verdict next to a newer run's report.
            lines.append(
                f"status left as set by run {sticky.holds_run}, whose report the comment holds (this is run {run_id})"
            )
            continue
        why = _status_refusal(client, target.sha, pull)
        if why:
            lines.append(why)
        else:
            settable.append(pull)
    if not settable and target.sha:
        lines.append(_end_own_pending(client, target.sha, report, run_url, context))
    if settable and target.sha:
        said, set_ = _set_verdict(client, target.sha, report, run_url, context=context)
        lines.append(said)
        # The gate's run, where its verdict stands: its check run too. A command's part-run has none,
        # and an older run whose status a newer run set must not put its check run after the newer one's.
        if set_ and context == STATUS_CONTEXT:
            lines.append(_check_run(client, target.sha, report, body, run_url))
    return tuple(lines)


def _end_own_pending(client: GitHubClient, sha: str, report, run_url: str | None, context: str) -> str:
    """This run attempt's own pending on `sha`, when it still holds the status there, ends with the run's
    verdict: the report is not the PR's latest (the head moved, a `[skip ci]` push started no run, the
    sticky holds a newer run's report), but it is this commit's, and no run ever leaves a pending behind."""
    this_run = run_of(run_url)
    current = client.current_status(sha, context=context)
    if not this_run[0] or current is None or current.state != "pending" or run_of(current.target_url) != this_run:
        return f"no pending of this run on {sha[:12]} to end"
    client.set_status(
        sha, report.verdict, status_description(report.verdict, report.headline), run_url, context=context
    )
    return f"status {report.verdict} on {sha} (this run's own pending, ended: its report is not the PR's latest)"


def _holds_status(client: GitHubClient, sha: str | None, run_url: str | None, context: str) -> bool:
    """Whether the status on `sha` names this very run attempt, after a newer run's: then this run took it
    over (it ran last on the commit, bot/publish/pending.py) and its report replaces the newer run's sticky."""
    this_run = run_of(run_url)
    if not sha or not this_run[0]:
        return False
    current = client.current_status(sha, context=context)
    return current is not None and run_of(current.target_url) == this_run


def _check_run(client: GitHubClient, sha: str, report, body: str, run_url: str | None) -> str:
    """The `export-conformance report` check run beside the status: the comment as summary, culprit lines annotated."""

    found = checks.annotations(report)
    outputs = [checks.output(report, body, batch) for batch in checks.batches(found)]
    try:
        client.create_check_run(sha, checks.CHECK_NAME, checks.CONCLUSIONS[report.verdict], outputs, run_url)
    except BotError as exc:  # the status is the gate; a missing `checks: write` costs only the annotations
        return f"no check run on {sha}: {exc}"
    return f"check run {report.verdict} on {sha} ({len(found)} annotation{'s' if len(found) != 1 else ''})"


def _set_verdict(
    client: GitHubClient, sha: str, report, run_url: str | None, *, context: str = STATUS_CONTEXT
) -> tuple[str, bool]:
    """The verdict on `sha`, unless a newer run set the status there (its link names the run); and whether it was set."""

    this_run = run_of(run_url)
    if this_run[0]:
        current = client.current_status(sha, context=context)
        if not may_set_verdict(current, this_run):
            return f"status on {sha} left as a newer run set it ({current.target_url})", False
    description = status_description(report.verdict, report.headline)
    # The link is the run's page from GitHub's event, never the report's run_url (the PR's code wrote it).
    client.set_status(sha, report.verdict, description, run_url, context=context)
    prefix = "status" if context == STATUS_CONTEXT else context
    return f"{prefix} {report.verdict} on {sha}", True


def _queue_run(
    client: GitHubClient,
    report,
    run: WorkflowRun,
    status_url: str | None,
    *,
    bot_login: str,
    rendering: dict,
) -> JobOutcome:
    """A merge-queue run: the verdict on the queue's commit; its PR is told only when a cell broke."""

    lines = [_set_verdict(client, run.head_sha, report, status_url)[0]]
    number = queue_pr(run.head_branch) if report.verdict == "failure" else None
    if number:
        body = _body(report, run.id, rendering)
        sticky = upsert_sticky(client, number, body, marker=COMMENT_MARKER, run_id=run.id, bot_login=bot_login)
        lines.append(f"#{number}: comment {sticky.id} (the merge queue's commit {run.head_sha[:12]} broke a cell)")
    return JobOutcome(tuple(lines))


def _status_refusal(client: GitHubClient, sha: str | None, pull: PullRequest) -> str | None:

    if not sha:
        return "no commit to set a status on"
    # Only a fork PR's commit can head a branch here by someone else's doing: ask GitHub then.
    return status_refusal(sha, pull, client.repository, *heads_elsewhere(client, sha, pull.head_repo))


def _cancelled(client: GitHubClient, event: RunEvent) -> JobOutcome:
    lines = ("the run was cancelled: nothing posted",)
    if event.command_comment:
        why = "The conformance run for this command was cancelled, so there is no report."
        lines += (_finish(client, event, reported=False, why=why),)
    return JobOutcome(lines)


def _finish(client: GitHubClient, event: RunEvent, *, reported: bool, why: str | None = None, pulls=()) -> str:

    reply = None
    if not reported:
        reply = (
            f"{why or 'The conformance run for this command left no report.'} "
            f"The run: {event.run_url or 'see the Actions tab'}. "
            "Comment `/export-check` again to check the PR's current head."
        )
    run = f"{event.run_id}/{event.run_attempt}" if event.run_id is not None else None
    return finish_command(client, event.command_comment, reported=reported, pulls=pulls, reply=reply, run=run)


def missing_report_job(client_for: Callable[[], GitHubClient], event: RunEvent, problem: str) -> JobOutcome:
    """A run that ended without a report: its pending becomes `error`, a dispatched command is finished
    with 😕 and a reply, and the job fails unless the run was cancelled. The client is made only when
    there is a status to end or a command to answer."""
    if event.conclusion == "cancelled":
        return _cancelled(client_for(), event) if event.command_comment else JobOutcome(("the run was cancelled",))
    lines: tuple[str, ...] = ()
    if event.run_id is not None or event.command_comment:
        client = client_for()
        if event.run_id is not None:
            lines += (_end_pending(client, event),)
        if event.command_comment:
            lines += (_finish(client, event, reported=False),)
    message = f"{problem}; the run's log says why it wrote none: {event.run_url or 'see the run'}"
    return JobOutcome((*lines, message), EXIT_USAGE, annotations=(("error", message),))


def _end_pending(client: GitHubClient, event: RunEvent) -> str:
    """This run's pending → `error`, on the commit its status went on (a dispatched run's: the PR's head)."""

    sha = commit_of(client, event.event_name, event.head_sha, event.command_pr)
    if not sha:
        return "no commit to end the pending status on"
    context = event.status_context
    current = client.current_status(sha, context=context)
    decision = ended_without_report(current, (event.run_id or 0, event.run_attempt))
    if decision is None:
        return f"the {context} status on {sha[:12]} is not this run's pending: left as it is"
    state, description = decision
    client.set_status(sha, state, description, event.status_url, context=context)
    return f"status {state} on {sha} (no report)"
