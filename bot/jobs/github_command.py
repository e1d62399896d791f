"""The GitHub jobs of `/export-check`: answer a command, apply a proposal, and the checks its dispatched run makes
(the pinned head, the merge base). What they say and decide: bot/publish/respond.py."""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, BotError
from bot.jobs.github import JobOutcome
from bot.publish.baseline import Caps
from bot.publish.events import CommentEvent
from bot.publish.github_api import GitHubClient
from bot.publish.respond import NotCommitted, apply_command, apply_gate, finish_command, handle_command, head_moved


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

    reply = (
        f"GitHub refused a step of committing the proposed skiplist edits ({failure}), so nothing was "
        "committed and the branch is unchanged. Comment `/export-check apply` to try again."
    )
    line = finish_command(client, event.comment_id, reported=False, pulls=(event.number,), reply=reply)
    message = f"apply: nothing was committed: {failure}"
    return JobOutcome((line, message), EXIT_USAGE, outputs=(("accepted", "false"),), annotations=(("error", message),))


def verify_sha_job(client: GitHubClient, pr: int, sha: str, *, same_repository: bool = False) -> JobOutcome:
    """Stop (exit 1) when the PR head moved away from the pinned SHA, or, with `same_repository`, when the
    PR's head is in a fork: a dispatched run runs on the default branch, and a fork's code must not."""

    moved = head_moved(client, pr, sha, same_repository=same_repository)
    if moved:
        return JobOutcome((moved,), EXIT_FAILURE, annotations=(("error", moved),))
    return JobOutcome((f"#{pr} head is still {sha}",))


def merge_base_job(client: GitHubClient, base: str, head: str) -> JobOutcome:
    """The PR's merge base with its base branch, as GitHub computes it: the commit its baseline is taken at."""
    sha = client.merge_base(base, head)
    return JobOutcome((sha,), outputs=(("sha", sha),))
