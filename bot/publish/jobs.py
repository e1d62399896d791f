"""The GitHub jobs the workflows run: client, event and inputs in, a frozen `JobOutcome` out (the CLI maps it)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bot.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, BotError
from bot.publish.baseline import Caps
from bot.publish.events import CommentEvent, RunEvent
from bot.publish.github_api import STATUS_CONTEXT, GitHubClient, PullRequest, RetryPolicy, WorkflowRun

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobOutcome:
    """What a job did: lines for the log, step outputs, annotations, and the exit code (docs/diff.md:
    1 is kept for a failed verdict, 2 for a refusal or bad input)."""

    lines: tuple[str, ...] = ()
    exit_code: int = EXIT_OK
    outputs: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()  # (level, message)


def make_client(repository: str | None, token: str | None, api_url: str, settings) -> GitHubClient:
    """The client for `repository`, with the retry policy the settings ask for."""
    if not repository or not token:
        raise BotError("no repository or token: set GITHUB_REPOSITORY and GITHUB_TOKEN (or pass --repo and --token)")
    return GitHubClient(repository, token, api_url=api_url, policy=RetryPolicy.from_settings(settings))


# --- the sticky comment and the status -------------------------------------------------------


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
    started (no one reads its report there); an error when it has none at all."""
    from bot.publish.trust import own_pulls

    candidates = _candidates(client, run, event)
    found = own_pulls(run, candidates, client.repository)
    if found:
        return PostTarget(run.head_sha, found)
    closed = [p for p in candidates if p.number in run.pull_requests and p.state != "open"]
    if closed:
        return PostTarget(None, (), f"#{closed[0].number} is {closed[0].state}, so this run's report is not posted.")
    raise BotError(f"no open pull request has head {run.head_sha} from {run.head_repo}; pass --pr")


def _dispatched_target(client: GitHubClient, command_pr: int, report_sha: str | None) -> PostTarget:
    """A dispatched run's PR, when its head is still the one the run checked (the report's pinned head).

    Its title (the default branch's `run-name`) names the PR; its commit is the default branch's.
    """
    pull = client.pull_request(command_pr)
    if report_sha and pull.head_sha == report_sha:
        return PostTarget(report_sha, (pull,))
    moved = f"#{pull.number} has a new head since this run checked {str(report_sha)[:12]}, so its report is not posted."
    return PostTarget(None, (), moved)


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
    from bot.publish.trust import runs_workflow

    run = event.as_run()
    if run is not None and not runs_workflow(run.path, workflow):
        return JobOutcome((f"ignored: a run of {run.path or 'an unknown workflow'}, not of {workflow}",))
    if run is not None and run.conclusion == "cancelled":
        return _cancelled(client, event)
    rendering = {"repository_url": repository_url, "dashboard_url": dashboard_url, "elapsed": _since(event, now)}
    if run is not None and run.event == "merge_group" and run.head_repo == client.repository:
        return _queue_run(client, report, run, event.status_url, bot_login=bot_login, rendering=rendering)
    target = pulls_of_run(client, event, report.head_sha, pr)
    if not target.pulls:
        return _nothing_to_post(client, event, target)
    run_id = event.run_id if event.run_id is not None else fallback_run_id
    context = event.status_context
    body = _body(report, run_id, rendering, gate=context == STATUS_CONTEXT)
    lines = _post(
        client, report, body, target, run_id=run_id, run_url=event.status_url, bot_login=bot_login, context=context
    )
    if event.command_comment:
        lines += (_finish(client, event, reported=True, pulls=tuple(p.number for p in target.pulls)),)
    return JobOutcome(lines)


def _nothing_to_post(client: GitHubClient, event: RunEvent, target: PostTarget) -> JobOutcome:
    """No PR to post on (a dispatched run's PR moved on): said in the log, and to the command it answers."""
    lines = (target.moved or "nothing to post",)
    if event.command_comment:
        lines += (_finish(client, event, reported=False, why=target.moved),)
    return JobOutcome(lines, annotations=(("notice", target.moved or ""),))


def _since(event: RunEvent, now: datetime | None) -> float | None:
    """Seconds from the run's creation (GitHub's record: the push) to `now`; None when the event has no record."""
    from bot.results.baseline import to_instant

    try:
        created = to_instant(event.created_at)
    except ValueError:
        return None
    return max((now or datetime.now(timezone.utc)) - created, timedelta(0)).total_seconds()


def _body(report, run_id: int, rendering: dict, *, gate: bool = True) -> str:
    """The sticky's text; `rendering` is render_comment's links and cost (links only into the workflow's own repository).

    A command run of part of the PR gets its own marker and says it is not the gate's verdict.
    """
    from bot.publish.comment import MAX_COMMENT, stamp_length
    from bot.report import COMMAND_MARKER, COMMAND_NOTE, COMMENT_MARKER, render_comment

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
    from bot.publish.comment import upsert_sticky
    from bot.report import COMMAND_MARKER, COMMENT_MARKER

    marker = COMMENT_MARKER if context == STATUS_CONTEXT else COMMAND_MARKER
    # A change that selects no cell (docs only) gets its status, not a comment: the sticky is only
    # updated where an earlier push of the PR posted one, so it never goes stale.
    create = bool(report.cells) or context != STATUS_CONTEXT
    lines, settable = [], []
    for pull in target.pulls:
        sticky = upsert_sticky(
            client, pull.number, body, marker=marker, run_id=run_id, bot_login=bot_login, create=create
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
    if settable and target.sha:
        said, set_ = _set_verdict(client, target.sha, report, run_url, context=context)
        lines.append(said)
        # The gate's run, where its verdict stands: its check run too. A command's part-run has none,
        # and an older run whose status a newer run set must not put its check run after the newer one's.
        if set_ and context == STATUS_CONTEXT:
            lines.append(_check_run(client, target.sha, report, body, run_url))
    return tuple(lines)


def _check_run(client: GitHubClient, sha: str, report, body: str, run_url: str | None) -> str:
    """The `export-conformance` check run beside the status: the comment as summary, culprit lines annotated."""
    from bot.publish.checks import CHECK_NAME, CONCLUSIONS, annotations, batches, output

    found = annotations(report)
    outputs = [output(report, body, batch) for batch in batches(found)]
    try:
        client.create_check_run(sha, CHECK_NAME, CONCLUSIONS[report.verdict], outputs, run_url)
    except BotError as exc:  # the status is the gate; a missing `checks: write` costs only the annotations
        return f"no check run on {sha}: {exc}"
    return f"check run {report.verdict} on {sha} ({len(found)} annotation{'s' if len(found) != 1 else ''})"


def _set_verdict(
    client: GitHubClient, sha: str, report, run_url: str | None, *, context: str = STATUS_CONTEXT
) -> tuple[str, bool]:
    """The verdict on `sha`, unless a newer run set the status there (its link names the run); and whether it was set."""
    from bot.publish.comment import status_description
    from bot.publish.pending import may_set_verdict, run_of

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
    from bot.publish.comment import upsert_sticky
    from bot.publish.pending import queue_pr
    from bot.report import COMMENT_MARKER

    lines = [_set_verdict(client, run.head_sha, report, status_url)[0]]
    number = queue_pr(run.head_branch) if report.verdict == "failure" else None
    if number:
        body = _body(report, run.id, rendering)
        sticky = upsert_sticky(client, number, body, marker=COMMENT_MARKER, run_id=run.id, bot_login=bot_login)
        lines.append(f"#{number}: comment {sticky.id} (the merge queue's commit {run.head_sha[:12]} broke a cell)")
    return JobOutcome(tuple(lines))


def _status_refusal(client: GitHubClient, sha: str | None, pull: PullRequest) -> str | None:
    from bot.publish.trust import status_refusal

    if not sha:
        return "no commit to set a status on"
    # Only a fork PR's commit can head a branch here by someone else's doing: ask GitHub then.
    branches = client.branches_at(sha) if pull.head_repo != client.repository else []
    return status_refusal(sha, pull, client.repository, branches)


def _cancelled(client: GitHubClient, event: RunEvent) -> JobOutcome:
    lines = ("the run was cancelled: nothing posted",)
    if event.command_comment:
        why = "The conformance run for this command was cancelled, so there is no report."
        lines += (_finish(client, event, reported=False, why=why),)
    return JobOutcome(lines)


def _finish(client: GitHubClient, event: RunEvent, *, reported: bool, why: str | None = None, pulls=()) -> str:
    from bot.publish.respond import finish_command

    reply = None
    if not reported:
        reply = (
            f"{why or 'The conformance run for this command left no report.'} "
            f"The run: {event.run_url or 'see the Actions tab'}. "
            "Comment `/export-check` again to check the PR's current head."
        )
    return finish_command(client, event.command_comment, reported=reported, pulls=pulls, reply=reply)


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
    from bot.publish.pending import commit_of, ended_without_report

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


# --- `/export-check` -------------------------------------------------------------------------


def _request_outputs(outcome) -> tuple[tuple[str, str], ...]:
    found = [("accepted", "true" if outcome.accepted else "false")]
    if outcome.request is not None:
        request = outcome.request
        found += [
            ("request", request.to_json()),
            ("kind", request.kind),
            ("pr", str(request.pr)),
            ("sha", request.head_sha or ""),
        ]
    return tuple(found)


def command_job(
    client_for: Callable[[], GitHubClient],
    event: CommentEvent,
    *,
    index: Callable[[], object],
    dispatch: str | None,
    reports: str | None,
    caps: Caps = Caps(),
) -> JobOutcome:
    """Answer an `/export-check` comment: check, acknowledge, pin the head, dispatch. `kind` is the
    output the apply job waits on, so a comment is answered by one job only."""
    from bot.publish.respond import handle_command

    why = event.ignored_because()
    if why:  # no client needed: nothing is said on GitHub
        return JobOutcome((f"ignored: {why}",), outputs=(("accepted", "false"),))
    names = index()
    outcome = handle_command(
        client_for(),
        event,
        model_classes=names.classes,
        model_types=frozenset(names.classes_by_type),
        dispatch=dispatch,
        reports=reports,
        caps=caps,
    )
    return JobOutcome((outcome.note,), outputs=_request_outputs(outcome))


def apply_job(
    client: GitHubClient,
    event: CommentEvent,
    *,
    workflow: str,
    dispatch: str | None,
    skiplists_path: str,
    caps: Caps = Caps(),
) -> JobOutcome:
    """`/export-check apply`: commit the PR's proposed skiplist patch (same-repository PRs). A refusal exits 2."""
    from bot.publish.respond import NotCommitted, apply_command, apply_gate

    ignored = apply_gate(client, event)
    if ignored is not None:
        return JobOutcome((ignored.note,), outputs=_request_outputs(ignored))
    pull = client.pull_request(event.number)
    try:
        outcome = apply_command(
            client, event, pull, workflow=workflow, skiplists_path=skiplists_path, dispatch=dispatch, caps=caps
        )
    except NotCommitted as exc:
        return _not_committed(client, event, exc)
    code = EXIT_OK if outcome.accepted or outcome.reply is None else EXIT_USAGE
    return JobOutcome((outcome.note,), code, outputs=_request_outputs(outcome))


def _not_committed(client: GitHubClient, event: CommentEvent, failure: BotError) -> JobOutcome:
    """GitHub refused a write of `apply` before the branch moved: 😕 and one reply (a re-run of this
    job finds it by its marker), then exit 2 with GitHub's words."""
    from bot.publish.respond import finish_command

    reply = (
        f"GitHub refused a step of committing the proposed skiplist edits ({failure}), so nothing was "
        "committed and the branch is unchanged. Comment `/export-check apply` to try again."
    )
    line = finish_command(client, event.comment_id, reported=False, pulls=(event.number,), reply=reply)
    message = f"apply: nothing was committed: {failure}"
    return JobOutcome((line, message), EXIT_USAGE, outputs=(("accepted", "false"),), annotations=(("error", message),))


def verify_sha_job(client: GitHubClient, pr: int, sha: str) -> JobOutcome:
    """Stop (exit 1) when the PR head moved away from the pinned SHA."""
    from bot.publish.respond import head_moved

    moved = head_moved(client, pr, sha)
    if moved:
        return JobOutcome((moved,), EXIT_FAILURE, annotations=(("error", moved),))
    return JobOutcome((f"#{pr} head is still {sha}",))


def merge_base_job(client: GitHubClient, base: str, head: str) -> JobOutcome:
    """The PR's merge base with its base branch, as GitHub computes it: the commit its baseline is taken at."""
    sha = client.merge_base(base, head)
    return JobOutcome((sha,), outputs=(("sha", sha),))


# --- the sweep on the default branch ---------------------------------------------------------


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
    from bot.publish.baseline import download_baseline
    from bot.results.baseline import chain

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
    """The report.json of the last `count` sweeps before this one, into `out/sweep-NNN/` (oldest first)."""
    from bot.files import write_text
    from bot.publish.obsolete_skips import history_json

    found = history_json(client, workflow, artifact, branch=branch, count=count, exclude_run=run_id, caps=caps)
    # Folder names keep the order, for reports without `created`.
    for index, (_run, data) in enumerate(found):
        write_text(out / f"sweep-{index:03d}" / "report.json", json.dumps(data, ensure_ascii=False))
    return JobOutcome((f"{len(found)} earlier {workflow} reports in {out}",))


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


def obsolete_skips_job(client: GitHubClient, given: ObsoleteInputs, caps: Caps) -> JobOutcome:
    """Propose with the probe history, then open, update or close the one obsolete-skip PR."""
    from bot.diff.model import Report, load_report
    from bot.publish.obsolete_skips import (
        current_report_json,
        history_json,
        obsolete_files,
        render_body,
        sync_pull_request,
        title_for,
    )

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
    done = sync_pull_request(
        client,
        edits,
        body,
        title=title_for(entries),
        base=given.branch,
        folder=given.skiplists_path,
        dispatch=given.dispatch,
    )
    return JobOutcome((done,))


def evidence_runs(client: GitHubClient, earlier, given: ObsoleteInputs, report_url: str | None):
    """The K runs that are the evidence: the earlier sweeps, then this one. This run's page comes from
    its id (GITHUB_RUN_ID); the report's own URL only when there is no id (the report is data)."""
    from bot.publish.obsolete_skips import Evidence

    own = f"{given.server_url.rstrip('/')}/{client.repository}/actions/runs/{given.run_id}" if given.run_id else ""
    this_url = given.run_url or own or report_url or ""
    return [Evidence(run.id, run.url) for run, _ in earlier] + (
        [Evidence(given.run_id, this_url)] if given.run_id else []
    )
