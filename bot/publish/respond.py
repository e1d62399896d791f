"""Answering `/export-check` comments: permission, acknowledgement, the pinned request, `failed` and `apply`."""

from __future__ import annotations

import difflib
import functools
import logging
import re
from dataclasses import dataclass, replace

from bot.cells import CellIdError
from bot.diff.errors import ReportError
from bot.diff.model import Report
from bot.diff.proposal import Proposal
from bot.errors import BotError
from bot.publish.baseline import REPORT_ARTIFACT, ArtifactError, Caps, fetch_artifacts, read_json_member
from bot.publish.command import (
    ALLOWED_PERMISSIONS,
    Invalid,
    Request,
    closed_refusal,
    failing_cells,
    fork_apply_reply,
    fork_kind_reply,
    fork_no_run_reply,
    fork_rerun_reply,
    fork_run_going_reply,
    help_text,
    left_out_reply,
    no_failing_reply,
    no_report_reply,
    parse_command,
    refusal,
    unusable_report_reply,
)
from bot.publish.events import CommentEvent, command_comment_of
from bot.publish.github_api import GitHubClient, GitHubError, PullRequest
from bot.publish.trust import ProposalSource, proposal_source

log = logging.getLogger(__name__)

_SKIPLIST_NAME = re.compile(r"^[A-Za-z0-9_.-]+\.toml$")


class NotCommitted(GitHubError):
    """A GitHub call of `apply` failed before the PR branch moved: nothing was committed, and no one
    has answered the command yet (the apply job does, with 😕 and one reply)."""


@dataclass(frozen=True)
class Outcome:
    """What happened to a comment: `request` is set only when a run should start."""

    accepted: bool
    note: str  # one line for the log
    request: Request | None = None
    reply: str | None = None


def reply_marker(comment_id: int, run: str | None = None) -> str:
    """Hidden in every reply: it makes the reply's body unique, so a post whose answer was lost is
    found by re-listing the comments instead of being posted twice. A run's answer to the command
    names the run attempt too: `apply` has replied to its comment already when the run it dispatched
    ends, and that run's own reply must still be posted."""
    return f"<!-- export-bot:reply-to {comment_id}{f' run {run}' if run else ''} -->"


def _reply(client: GitHubClient, event: CommentEvent, text: str) -> None:
    client.create_comment(event.number, f"{text.rstrip()}\n\n{reply_marker(event.comment_id)}\n")


def _refuse(client: GitHubClient, event: CommentEvent, reply: str, note: str) -> Outcome:
    _reply(client, event, reply)
    client.react(event.number, event.comment_id, "confused")
    return Outcome(False, note, reply=reply)


def handle_command(
    client: GitHubClient,
    event: CommentEvent,
    *,
    model_classes: frozenset[str],
    model_types: frozenset[str],
    dispatch: str | None = None,
    reports: str | None = None,
    caps: Caps = Caps(),
) -> Outcome:
    """Accept or refuse one comment; an accepted run request carries the PR head SHA pinned now.

    `reports` is the workflow whose report artifacts hold the proposals (default: `dispatch`);
    a fork's `apply` is answered here, once, with the patch.
    """
    why = event.ignored_because()
    if why:
        return Outcome(False, f"ignored: {why}")
    parsed = parse_command(event.body, model_classes=model_classes, model_types=model_types)
    if parsed is None:
        return Outcome(False, "ignored: not an /export-check command")
    refused = _screen(client, event, parsed)
    if refused is not None:
        return refused
    pull = client.pull_request(event.number)
    if pull.state != "open":
        return _refuse(client, event, closed_refusal(event.number), f"refused: #{event.number} is {pull.state}")
    workflow = reports or dispatch or "export-conformance.yml"
    if parsed.kind == "apply" and pull.is_fork:
        patch = fork_patch(client, workflow, pull, caps=caps)
        reply = fork_apply_reply(pull.head_repo or "a deleted fork", patch)
        return _refuse(client, event, reply, "answered apply on a fork with the patch")
    if pull.is_fork and parsed.kind != "apply":
        return _fork_run(client, event, pull, workflow, parsed.kind)
    if parsed.kind == "failed":
        found = _failed(client, event, pull, workflow, caps)
        if isinstance(found, Outcome):
            return found
        parsed = replace(parsed, cells=found.cells)
    client.react(event.number, event.comment_id, "eyes")
    request = replace(parsed, pr=event.number, head_sha=pull.head_sha, comment_id=event.comment_id)
    if dispatch and request.kind != "apply":  # `apply` commits first, then dispatches itself
        _dispatch(client, event, dispatch, request)
    return Outcome(True, f"accepted {request.kind} at {pull.head_sha}", request=request)


def _fork_run(client: GitHubClient, event: CommentEvent, pull: PullRequest, workflow: str, kind: str) -> Outcome:
    """A command on a fork PR never dispatches: a dispatched run runs on the default branch, where the
    fork's code could reach the job's read-write cache token and plant what main's runs restore
    (docs/github.md, the threat model). `/export-check` re-runs the PR's own `pull_request` run for its
    head instead, in the PR's own context; the other run kinds are refused with a reply saying so."""
    if kind != "rerun":
        return _refuse(client, event, fork_kind_reply(kind), f"refused {kind} on a fork PR: no dispatch")
    runs = client.workflow_runs(workflow, head_sha=pull.head_sha, event="pull_request", status=None, limit=5)
    own = [r for r in runs if proposal_source(r, pull, client.repository) is not None]
    if not own:
        return _refuse(client, event, fork_no_run_reply(pull.head_sha), "refused: the fork PR has no run for its head")
    run = max(own, key=lambda r: r.id)
    if run.status != "completed" or run.conclusion == "action_required":
        _reply(client, event, fork_run_going_reply(run.id, run.url, waiting=run.conclusion == "action_required"))
        client.react(event.number, event.comment_id, "eyes")
        return Outcome(True, f"the fork PR's run {run.id} is {run.conclusion or run.status}: not re-run")
    client.rerun(run.id)
    client.react(event.number, event.comment_id, "eyes")
    _reply(client, event, fork_rerun_reply(run.id, run.url))
    return Outcome(True, f"re-ran the fork PR's own run {run.id} at {pull.head_sha}")


def _screen(client: GitHubClient, event: CommentEvent, parsed: Request | Invalid) -> Outcome | None:
    """The answer to a command that needs no PR: a refused author, an invalid command, `help`; else None."""
    permission = client.permission(event.author)
    if not permission.allows(ALLOWED_PERMISSIONS):
        return _refuse(
            client, event, refusal(event.author, permission.role), f"refused: {event.author} has {permission.role}"
        )
    if isinstance(parsed, Invalid):
        return _refuse(
            client, event, parsed.message, f"refused: {parsed.count} problem(s): " + "; ".join(parsed.problems)
        )
    if parsed.kind == "help":
        reply = help_text()
        _reply(client, event, reply)
        return Outcome(False, "answered help", reply=reply)
    return None


def _failed(client: GitHubClient, event: CommentEvent, pull: PullRequest, workflow: str, caps: Caps):
    """The failing cells of `pull`'s latest report (a FailedCells), or the Outcome of answering that there
    are none to re-run: no report for the head, an unusable one, or no failing cell (one reply each)."""
    try:
        latest = latest_report_json(client, workflow, pull, caps=caps)
    except GitHubError as exc:
        reply = f"GitHub refused to list this PR's conformance runs ({exc}), so nothing was re-run. Try again later."
        _refuse(client, event, reply, "refused: the runs could not be listed")
        raise  # GitHub refusing after its retries fails the job (exit 2), as a refused dispatch does
    if latest is None:
        return _refuse(client, event, no_report_reply(pull.head_sha), "refused failed: no report for the head")
    run_id, data = latest
    try:
        found = failing_cells(Report.from_json(data, where=f"run {run_id}'s report.json"))
    except (ReportError, CellIdError) as exc:
        log.warning("run %s's report cannot be used: %s", run_id, exc)
        # A format error quotes the report's own strings: they stay in the log, not in the reply.
        problem = str(exc) if isinstance(exc, CellIdError) else "its `report.json` is not a report this bot can read"
        reply = unusable_report_reply(pull.head_sha, run_id, problem)
        return _refuse(client, event, reply, f"refused failed: run {run_id}'s report cannot be used")
    if not found.cells:
        _reply(client, event, no_failing_reply(pull.head_sha, run_id))
        return Outcome(False, f"answered failed: run {run_id}'s report has no failing cells")
    if found.left_out:
        _reply(client, event, left_out_reply(found, run_id))
    return found


def _dispatch(client: GitHubClient, event: CommentEvent, workflow: str, request: Request) -> None:
    """Start the conformance run; a dispatch GitHub refuses is answered with 😕 and a reply, then fails the job."""
    # `comment` names the run (`run-name`), so the job that posts its report can finish the
    # command with 🚀 or 😕 (a workflow_run event carries the run's title, not its inputs), and
    # a dispatch whose answer was lost is recognised by the run it started.
    inputs = {
        "pr": str(request.pr),
        "sha": request.head_sha,
        "request": request.to_json(),
        "comment": str(request.comment_id or ""),
    }
    try:
        client.dispatch(
            workflow,
            event.default_branch,
            inputs,
            started=lambda run: command_comment_of(run.title) == request.comment_id,
        )
    except GitHubError as exc:
        reply = (
            f"I could not start the conformance run: {exc}. Nothing is running for this command; "
            "comment `/export-check` again in a few minutes, or ask a maintainer to look at the workflow's log."
        )
        try:
            _reply(client, event, reply)
            client.react(event.number, event.comment_id, "confused")
        except GitHubError as also:  # the job fails with the first error either way
            log.warning("could not say so on #%s either: %s", event.number, also)
        raise


def finish_command(
    client: GitHubClient,
    comment_id: int,
    *,
    reported: bool,
    pulls: tuple[int, ...] = (),
    reply: str | None = None,
    run: str | None = None,
) -> str:
    """React 🚀 (the run reported) or 😕 (it left no report, with `reply` saying why) to the
    `/export-check` comment a run answered.

    The id comes from the dispatched run's title, so it is checked before any reaction: the
    comment must still exist, be a command, and be on one of `pulls` when they are known. The
    reply is posted once: a re-run of this job finds it by its marker (naming `run`, the run attempt
    that answers, when there is one).
    """
    found = client.issue_comment(comment_id)
    if found is None:
        return f"command comment {comment_id} is gone: no reaction"
    number, comment = found
    if pulls and number not in pulls:
        return f"comment {comment_id} is on #{number}, not on #{', #'.join(map(str, pulls))}: no reaction"
    if not comment.body.lstrip().startswith("/export-check"):
        return f"comment {comment_id} is not an /export-check command: no reaction"
    marker = reply_marker(comment_id, run)
    if reply and not any(marker in c.body for c in client.list_comments(number)):
        client.create_comment(number, f"{reply.rstrip()}\n\n{marker}\n")
    reaction = "rocket" if reported else "confused"
    client.react(number, comment_id, reaction)
    return f"#{number}: {reaction} on command comment {comment_id}"


def head_moved(client: GitHubClient, number: int, pinned: str, *, same_repository: bool = False) -> str | None:
    """A message when PR `number`'s head is no longer `pinned` (or, with `same_repository`, is a fork's), else None."""
    pull = client.pull_request(number)
    if same_repository and pull.is_fork:
        return (
            f"#{number}'s head is in {pull.head_repo or 'a deleted fork'}, not in this repository: a run on the "
            "default branch does not run a fork's code, so this run stops. Comment `/export-check` on the PR "
            "to re-run its own conformance run."
        )
    if pull.head_sha == pinned:
        return None
    return (
        f"The head of #{number} moved from {pinned[:12]} (pinned when the command was accepted) to "
        f"{pull.head_sha[:12]}: this run stops. Comment `/export-check` again to check the new head."
    )


def latest_proposal(
    client: GitHubClient, workflow: str, pull: PullRequest, *, artifact: str = REPORT_ARTIFACT, caps: Caps = Caps()
) -> Proposal | None:
    """The proposal of the newest report made for `pull`'s current head, or None when no run GitHub ties
    to that PR and head left one (latest_report_json). Only the proposal's entries are used."""
    latest = latest_report_json(client, workflow, pull, artifact=artifact, caps=caps)
    if latest is None:
        return None
    run_id, data = latest
    raw = data.get("proposal")
    # Checked field by field: a malformed proposal is a one-line error, never a traceback.
    return Proposal() if raw is None else Proposal.from_json(raw, where=f"run {run_id}'s {artifact}")


def latest_report_json(
    client: GitHubClient, workflow: str, pull: PullRequest, *, artifact: str = REPORT_ARTIFACT, caps: Caps = Caps()
) -> tuple[int, dict] | None:
    """The run id and report document of the newest report made for `pull`'s current head, or None when
    no run GitHub ties to that PR and head left one.

    Which runs count is decided from GitHub's record of each run (trust.proposal_source): the PR's own
    `pull_request` run, or a run dispatched for this PR. The report is data written by the PR's code,
    read within `caps`; a dispatched run's report must state the pinned head.
    """
    sources: dict[int, ProposalSource] = {}

    def accept(run) -> bool:
        source = proposal_source(run, pull, client.repository)
        if source is not None:
            sources[run.id] = source
        return source is not None

    # Runs started by `pull_request` carry the head SHA; dispatched ones carry the default
    # branch's, so look at recent runs too.
    fetch = functools.partial(
        fetch_artifacts, client, workflow, artifact, accept=accept, caps=caps, skip_oversized=True
    )
    candidates = fetch(head_sha=pull.head_sha, status="completed", limit=3)
    candidates += fetch(status="completed", limit=5)
    for fetched in sorted(candidates, key=lambda f: f.run.id, reverse=True):
        try:
            data = read_json_member(fetched.data, caps=caps)
        except ArtifactError as exc:
            log.warning("run %s: %s", fetched.run.id, exc)
            continue
        pinned = sources[fetched.run.id].pinned
        if isinstance(data, dict) and (pinned is None or data.get("head_sha") == pinned):
            return fetched.run.id, data
    return None


def edited_skiplists(client: GitHubClient, proposal: Proposal, head_sha: str, skiplists_path: str) -> dict[str, str]:
    """The PR head's skiplist files with the proposal's entries applied by our own editor: path → new text."""
    return {path: new for path, (_, new) in skiplist_changes(client, proposal, head_sha, skiplists_path).items()}


def fork_patch(
    client: GitHubClient, workflow: str, pull: PullRequest, skiplists_path: str = "skiplists", *, caps: Caps = Caps()
) -> str | None:
    """The unified diff of the latest report's proposal for a fork PR's head; None when no report is for it.

    The diff is made here from the entries and the head's files, like `apply`'s commit: the
    report's own `patch` text was written by the PR's code and is never echoed.
    """
    proposal = latest_proposal(client, workflow, pull, caps=caps)
    if proposal is None:
        return None
    if not proposal.entries:
        return ""
    changes = skiplist_changes(client, proposal, pull.head_sha, skiplists_path)
    return "".join(
        "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))
        for path, (old, new) in sorted(changes.items())
    )


def skiplist_changes(
    client: GitHubClient, proposal: Proposal, head_sha: str, skiplists_path: str
) -> dict[str, tuple[str, str]]:
    """path → (text at the head, text with the proposal's entries applied by our own editor).

    Only the entries (data) come from the report; the text is produced here, in memory, from
    the files at the pinned head, so a report cannot smuggle arbitrary content into a commit.
    """
    from bot.propose.proposal import apply_edits
    from bot.skiplist.model import SkiplistError, parse_texts

    folder = skiplists_path.strip("/")
    before = {name: text for name, text in client.read_folder(head_sha, folder).items() if _SKIPLIST_NAME.match(name)}
    after = apply_edits(proposal.entries, before)
    try:
        parse_texts({**before, **after}, folder)
    except SkiplistError as exc:
        raise ArtifactError(f"the edited skiplists do not load: {exc}") from exc
    return {f"{folder}/{name}": (before.get(name, ""), text) for name, text in after.items()}


def apply_gate(client: GitHubClient, event: CommentEvent) -> Outcome | None:
    """None when the apply job should act on this comment; else why it stays quiet.

    The workflow runs the apply job only when the command job's parser said `apply`; this checks
    again (a caller may wire the jobs differently) and says nothing on GitHub: `handle_command`
    answered refusals, closed PRs and forks (with the patch) already, so a comment gets one reply.
    """
    from bot.publish.command import first_line

    if event.ignored_because() or first_line(event.body).split() != ["/export-check", "apply"]:
        return Outcome(False, "ignored: not an /export-check apply comment")
    permission = client.permission(event.author)
    if not permission.allows(ALLOWED_PERMISSIONS):
        return Outcome(False, f"ignored: {event.author} has {permission.role} (refused by `github command`)")
    pull = client.pull_request(event.number)
    if pull.is_fork or pull.state != "open":
        return Outcome(False, "ignored: a fork or closed PR (answered by `github command`)")
    return None


def apply_command(
    client: GitHubClient,
    event: CommentEvent,
    pull: PullRequest,
    *,
    workflow: str,
    skiplists_path: str = "skiplists",
    dispatch: str | None = None,
    caps: Caps = Caps(),
) -> Outcome:
    """Commit the latest report's proposed skiplist patch to the PR branch (same repository only).

    The proposal comes only from a run GitHub ties to this PR and its current head (latest_proposal).
    Every refusal is a reply and 😕: no report, an empty or unusable proposal, a lost push race.
    """
    if pull.is_fork or pull.state != "open":
        return Outcome(False, "ignored: a fork or closed PR, answered by `github command`")
    try:
        proposal = latest_proposal(client, workflow, pull, caps=caps)
    except BotError as exc:
        # GitHub refusing after its retries, or a report whose proposal is not one: answered all the same.
        reply = f"The latest report's proposal could not be read ({exc}), so nothing was committed."
        return _refuse(client, event, reply, f"refused: the proposal could not be read ({exc})")
    if proposal is None:
        reply = (
            f"There is no conformance report for the current head {pull.head_sha[:12]} yet, so there "
            "is nothing to apply. Comment `/export-check` and try again when its report is posted."
        )
        return _refuse(client, event, reply, "refused: no report for head")
    try:
        files = edited_skiplists(client, proposal, pull.head_sha, skiplists_path) if proposal.entries else {}
    except BotError as exc:
        reply = f"The latest report's proposal cannot be applied: {exc}. Nothing was committed."
        return _refuse(client, event, reply, f"refused: unusable proposal ({exc})")
    if not files:
        return _refuse(
            client,
            event,
            "The latest report proposes no skiplist change for this head: nothing to apply.",
            "refused: empty proposal",
        )
    return _commit(client, event, pull, files, dispatch)


def _commit(client: GitHubClient, event: CommentEvent, pull: PullRequest, files: dict, dispatch: str | None) -> Outcome:
    message = f"Apply export-bot's proposed skiplist edits\n\nRequested in #{event.number} by @{event.author}."
    try:
        sha = client.commit_files(pull.head_sha, files, message)
    except GitHubError as exc:  # blobs, tree or commit: the branch is untouched
        raise NotCommitted(str(exc), exc.status) from exc
    try:
        # Fast-forward only: a push since the report would be clobbered; GitHub then says 422.
        client.set_branch(pull.head_ref, sha, force=False)
    except GitHubError as exc:
        if exc.status != 422:
            _check_moved(client, pull.head_ref, sha, exc)
        else:
            reply = (
                f"Someone pushed to `{pull.head_ref}` while the proposed edits were being committed, so "
                "nothing was committed. Comment `/export-check` to check the new head, then `apply` its proposal."
            )
            return _refuse(client, event, reply, f"refused: the push race was lost ({exc})")
    _reply(client, event, f"Committed the proposed skiplist edits as {sha} ({', '.join(sorted(files))}).")
    client.react(event.number, event.comment_id, "rocket")
    request = Request("rerun", pr=event.number, head_sha=sha, comment_id=event.comment_id)
    if dispatch:
        # A push made with the workflow token gets a run that waits for a maintainer's approval
        # (docs/github.md, "Runs the bot's own pushes start"): the re-run is dispatched, no click needed.
        _dispatch(client, event, dispatch, request)
    return Outcome(True, f"applied as {sha}", request=request)


def _check_moved(client: GitHubClient, branch: str, sha: str, failure: GitHubError) -> None:
    """Return when `branch` is at `sha` after all (the update's answer was lost); else NotCommitted."""
    try:
        moved = client.branch_sha(branch) == sha
    except GitHubError as exc:
        log.warning("could not read %s back after the failed update: %s", branch, exc)
        moved = False
    if not moved:
        raise NotCommitted(str(failure), failure.status) from failure
