"""The obsolete-skip PR: one branch, force-updated, one open PR edited in place, closed when nothing is left."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.diff.proposal import ProposedEdit
from bot.errors import BotError
from bot.publish.github_api import GitHubClient, PullRequest, RefMoved, WorkflowRun

log = logging.getLogger(__name__)

BRANCH = "export-bot/obsolete-skips"
MARKER = "<!-- export-bot:obsolete-skips -->"
_EDIT = re.compile(r"<!-- export-bot:edit ([0-9a-f]{16}) -->")
# The newest sweep the PR's evidence comes from: a job whose evidence is older never rewrites it.
_SWEEP = re.compile(r"<!-- export-bot:sweep (\d{1,20}) -->")


def obsolete_entries(entries: list[dict]) -> list[dict]:
    """The removals and narrowings of a proposal (added entries belong on the PR that broke them)."""
    return [e for e in entries if e.get("action") in ("remove", "narrow")]


def fingerprint(entries: list[dict]) -> str:
    """What the PR proposes and on which evidence (cells, not runs): a maintainer who closed a PR for
    this fingerprint is not asked again until it changes."""
    keys = ("action", "file", "scope", "model_class", "new_scopes", "evidence", "still_failing")
    canonical = sorted(json.dumps({k: e.get(k) for k in keys}, sort_keys=True, default=list) for e in entries)
    return hashlib.sha256("\n".join(canonical).encode()).hexdigest()[:16]


def fingerprint_of(body: str) -> str | None:
    found = _EDIT.search(body or "")
    return found[1] if found else None


def sweep_of(body: str) -> int:
    """The newest sweep a body's evidence comes from (0: a body written before bodies said so)."""
    found = _SWEEP.search(body or "")
    return int(found[1]) if found else 0


def title_for(entries: list[dict]) -> str:
    """Says what the PR does: remove, narrow, or both."""
    removed = sum(1 for e in entries if e.get("action") == "remove")
    narrowed = sum(1 for e in entries if e.get("action") == "narrow")
    parts = []
    if removed:
        parts.append(f"remove {removed} obsolete skip{'s' if removed > 1 else ''}")
    if narrowed:
        parts.append(f"narrow {narrowed} skip{'s' if narrowed > 1 else ''} to the cells that still fail")
    return "Skiplists: " + (", ".join(parts) if parts else "remove obsolete skips")


@dataclass(frozen=True)
class PullOptions:
    """How the PR is opened: its labels, the reviewers asked, and whether it starts as a draft.

    Set when the PR is opened only: an update every sweep must not re-add a label a maintainer
    removed or ask a reviewer again.
    """

    labels: tuple[str, ...] = ()
    reviewers: tuple[str, ...] = ()  # logins, or `org/team` for a team
    draft: bool = False


@dataclass(frozen=True)
class Evidence:
    """One sweep whose probe results the PR rests on."""

    run_id: int
    url: str


def render_body(entries: list[dict], *, min_passes: int, runs: list[Evidence] = ()) -> str:
    """The PR body: the edits, the K runs that are their evidence, and the edit's fingerprint (hidden)."""
    lines = [
        MARKER,
        f"<!-- export-bot:edit {fingerprint(entries)} -->",
        f"<!-- export-bot:sweep {max((r.run_id for r in runs), default=0)} -->",
        f"These skiplist entries are no longer needed: every cell they skip passed in the last "
        f"{min_passes} probe runs of the baseline sweep on main (a narrowed entry keeps the cells that still fail).",
        "",
    ]
    for e in entries:
        where = f"`{e['file']}` `[{e['scope']}]` **{e['model_class']}**"
        evidence = ", ".join(f"`{c}`" for c in e.get("evidence", ())) or "no cell listed"
        if e["action"] == "narrow":
            lines.append(f"- narrow {where} → {', '.join(f'`{s}`' for s in e.get('new_scopes', ()))}")
            lines.append(f"  - passing now: {evidence}")
            still = ", ".join(f"`{c}`" for c in e.get("still_failing", ()))
            if still:
                lines.append(f"  - still failing: {still}")
        else:
            lines.append(f"- remove {where}")
            lines.append(f"  - passing now: {evidence}")
    if runs:
        listed = ", ".join(f"[run {r.run_id}]({r.url})" if r.url else f"run {r.run_id}" for r in runs)
        lines += ["", f"Evidence, the {len(runs)} sweeps (oldest first): {listed}"]
    lines += [
        "",
        "This PR is kept up to date by `export-bot github obsolete-skips`; edits to it are overwritten. "
        "Close it to decline: the same edit on the same evidence is not proposed again.",
    ]
    return "\n".join(lines) + "\n"


def _nothing_left(client: GitHubClient, pull, expected: str | None, short_history: str | None) -> str:
    """No edit is left: close the open PR and delete its branch, unless history was short or the branch moved."""
    if pull is None:
        return "nothing to remove, no PR open"
    if short_history:
        return f"#{pull.number} left as it is: {short_history}"
    if client.branch_sha(BRANCH) != expected:  # another job's edit stands: its PR is not closed
        return _superseded(RefMoved(f"branch {BRANCH} moved since this job read it"))
    client.edit_pull(
        pull.number,
        state="closed",
        body=f"{MARKER}\nNothing is left to remove: the skips this PR removed are needed again "
        "or were removed on main.\n",
    )
    try:
        client.swap_branch(BRANCH, expected, None)
    except RefMoved as exc:
        return _superseded(exc)
    return f"closed #{pull.number}"


def sync_pull_request(
    client: GitHubClient,
    edits: Sequence[ProposedEdit],
    body: str,
    *,
    title: str | None = None,
    base: str = "main",
    folder: str = "skiplists",
    dispatch: str | None = None,
    short_history: str | None = None,
    options: PullOptions = PullOptions(),
) -> str:
    """Bring the branch and its PR in line with `edits`, applied to `base`'s skiplists as they are now.

    `short_history` says why the edits could not be judged (fewer earlier sweeps than a removal
    needs): an open PR is then left as it is, never closed as if its skips were needed again.

    The sweep takes hours, and entries merged meanwhile must survive: the edits are applied (by
    the same editor, idempotently) to the files at `base`'s tip, never to the sweep's old copies.
    With `dispatch`, the conformance workflow is started for the PR's new head, since the run a push
    or a PR made with the workflow token gets waits for a maintainer's approval (docs/github.md,
    "Runs the bot's own pushes start"). A new PR gets `options` (labels, reviewers, draft).
    Returns what was done.
    """
    title = title or title_for([])
    # Read first: the branch is moved only from this value, so a job that ran alongside keeps its update.
    expected = client.branch_sha(BRANCH)
    pull = client.find_open_pull(BRANCH, base)
    if pull is not None and sweep_of(pull.body) > sweep_of(body):
        # A job of a later sweep got there first (this one was displaced, or ran alongside it).
        return (
            f"superseded: #{pull.number} rests on sweep {sweep_of(pull.body)}, newer than this job's "
            f"{sweep_of(body)}; left as that job made it"
        )
    base_sha = client.branch_sha(base)
    if base_sha is None:
        raise BotError(f"branch {base} does not exist in {client.repository}: pass the default branch as --branch")
    files = rebased_files(client, edits, base_sha, folder)
    if not files:
        return _nothing_left(client, pull, expected, short_history)
    if pull is None:
        declined = _declined(client, fingerprint_of(body), base)
        if declined is not None:
            return f"#{declined.number} was closed for this same edit on the same evidence: not proposed again"
    sweep = sweep_of(body)
    sha = client.commit_files(base_sha, files, f"{title}\n\n{SWEEP_TRAILER}: {sweep}")
    # Always rebuilt on the current main: the branch holds one bot commit, never anyone's work.
    lost = _swap(client, expected, sha, sweep)
    if lost is not None:
        return lost
    if pull is None:
        pull = client.create_pull(BRANCH, base, title, body, draft=options.draft)
        done = f"opened #{pull.number}" + _dress(client, pull.number, options)
    else:
        client.edit_pull(pull.number, title=title, body=body)
        done = f"updated #{pull.number}"
    if dispatch:
        done += "; " + _dispatch_check(client, dispatch, base, pull.number, sha)
    return done


SWEEP_TRAILER = "Export-bot-sweep"  # the commit's sweep, read back when another writer moved the branch
_TRAILER = re.compile(rf"^{SWEEP_TRAILER}: (\d{{1,20}})$", re.M)


def _swap(client: GitHubClient, expected: str | None, sha: str, sweep: int, tries: int = 3) -> str | None:
    """Move the branch from `expected` to `sha` (compare-and-swap); None when done, else what the job says.

    When another writer moved it since it was read, its commit says which sweep it rests on: a newer
    one's stands (this job is superseded); an older one's is replaced, from where it now is, with a
    fresh compare each time, so the newest sweep's edits end on the branch whichever job ends last.
    """
    for _ in range(tries):
        try:
            client.swap_branch(BRANCH, expected, sha, force=True)
            return None
        except RefMoved as exc:
            lost = exc
            expected = client.branch_sha(BRANCH)
            found = _TRAILER.search(client.commit_message(expected)) if expected else None
            theirs = int(found[1]) if found else 0
            if theirs > sweep:
                return _superseded(RefMoved(f"branch {BRANCH} holds sweep {theirs}'s edits, newer than {sweep}'s"))
            log.info("branch %s moved to sweep %d's edits, older than %d's: replacing them", BRANCH, theirs, sweep)
    return _superseded(lost)


def _superseded(exc: RefMoved) -> str:
    """What a job that lost the race to the branch says: the other job's branch and PR stand as it left them."""
    return f"superseded: {exc}. The branch and its PR are left as the other job made them"


def _dress(client: GitHubClient, number: int, options: PullOptions) -> str:
    """The new PR's labels and review requests; what was done, for the job's line."""
    said = ""
    if options.draft:
        said += " as a draft"
    if options.labels:
        client.add_labels(number, options.labels)
        said += f", labelled {', '.join(options.labels)}"
    if options.reviewers:
        client.request_reviews(number, options.reviewers)
        said += f", review asked of {', '.join(options.reviewers)}"
    return said


def rebased_files(client: GitHubClient, edits: Sequence[ProposedEdit], base_sha: str, folder: str) -> dict[str, str]:
    """Repository path → new text of each skiplist file the edits change, applied to the files at `base_sha`."""
    from bot.propose.proposal import apply_edits

    folder = folder.strip("/")
    texts = {name: text for name, text in client.read_folder(base_sha, folder).items() if name.endswith(".toml")}
    changed = apply_edits(edits, texts)
    return {f"{folder}/{name}": text for name, text in changed.items() if text != texts.get(name)}


def _dispatch_check(client: GitHubClient, workflow: str, base: str, number: int, sha: str) -> str:
    """The conformance run for the PR's head, as `apply` starts one: the required check's only source."""
    from bot.publish.command import Request
    from bot.publish.events import command_pr_of

    request = Request("rerun", pr=number, head_sha=sha)
    inputs = {"pr": str(number), "sha": sha, "request": request.to_json(), "comment": ""}
    client.dispatch(workflow, base, inputs, started=lambda run: command_pr_of(run.title) == number)
    return f"dispatched {workflow} for #{number} at {sha[:12]}"


def _declined(client: GitHubClient, edit: str | None, base: str) -> PullRequest | None:
    """A PR for the same edit that someone closed without merging (the bot's own closing drops the fingerprint)."""
    if edit is None:
        return None
    owner = client.repository.split("/")[0]
    for closed in client.pulls_from(owner, BRANCH, state="closed", base=base, limit=10):
        if not closed.merged and fingerprint_of(closed.body) == edit:
            return closed
    return None


def current_report_json(client: GitHubClient, run_id: int, artifact: str, *, caps=None) -> dict:
    """This sweep's report.json, from the artifact an earlier job of the same run uploaded."""
    from bot.publish.baseline import ArtifactError, Caps, read_json_member

    caps = caps or Caps()
    found = next((a for a in client.artifacts(run_id) if a.name == artifact), None)
    data = read_json_member(client.download(found, max_bytes=caps.archive), caps=caps) if found else None
    if data is None:
        raise ArtifactError(f"run {run_id} has no {artifact} artifact with a report.json; pass --report")
    return data


def history_json(
    client: GitHubClient, workflow: str, artifact: str, *, branch: str, count: int, exclude_run: int, caps=None
) -> list[tuple[WorkflowRun, dict]]:
    """(run, report.json) of the last `count` sweeps on `branch` before this one, oldest first.

    Only this repository's own sweeps (trust.is_sweep): a fork's run on a branch it named like the
    default one never becomes a night of history or a passing probe. A sweep counts when it uploaded
    its artifact, whatever became of its later jobs: a failed obsolete-skip job (this one, another
    night) must not drop that night's probes.
    """
    from bot.publish.baseline import ArtifactError, Caps, fetch_artifacts, read_json_member
    from bot.publish.trust import FULL_SWEEP_EVENTS, is_sweep

    caps = caps or Caps()
    reports = []
    fetched_runs = fetch_artifacts(
        client,
        workflow,
        artifact,
        accept=lambda run: (
            # Before this one: a newer sweep that ended first is never taken for an earlier night.
            (run.id < exclude_run if exclude_run else True)
            and run.event in FULL_SWEEP_EVENTS
            and is_sweep(run, client.repository, branch)
        ),
        branch=branch,
        status=None,
        limit=count,
        caps=caps,
        events=FULL_SWEEP_EVENTS,  # the API's `event` filter: pushes, which never sweep, take no room
    )
    for fetched in fetched_runs:
        try:
            data = read_json_member(fetched.data, caps=caps)
        except ArtifactError as exc:
            log.warning("run %s: %s; left out of the history", fetched.run.id, exc)
            continue
        if data is not None:
            reports.append((fetched.run, data))
    return list(reversed(reports))


def newer_sweep(client: GitHubClient, workflow: str, artifact: str, *, branch: str, run_id: int) -> WorkflowRun | None:
    """A sweep of `branch` newer than run `run_id` that already uploaded its `artifact`, if any: what this
    one would publish (the dashboard) is then older than what that one publishes."""
    from bot.publish.baseline import newest_with
    from bot.publish.trust import SWEEP_EVENTS, is_sweep

    return newest_with(
        client,
        workflow,
        artifact,
        accept=lambda run: run.id > run_id and is_sweep(run, client.repository, branch),
        branch=branch,
        events=SWEEP_EVENTS,
    )


def obsolete_files(report, history, skiplists_dir: Path, *, min_passes: int) -> tuple:
    """The removals and narrowings the probe history supports (edits, applied later to main's current files).

    `report` and `history` (earlier sweeps' reports, oldest first) are read from report.json.
    """
    from bot.diff.proposal import NARROW, REMOVE
    from bot.propose.proposal import propose, results_from_report
    from bot.skiplist.model import read_skiplists

    if min_passes > 1 and not history:
        # `propose` lets a lone run decide (a PR's `/export-check probe`); on main K passes are needed.
        log.info("no earlier sweeps: a skip needs %d passing probes in a row before it is removed", min_passes)
        return ()
    runs = [results_from_report(item) for item in history]
    skiplists = read_skiplists(skiplists_dir)
    full = propose(report, results_from_report(report), skiplists, history=runs, min_passes=min_passes)
    return tuple(e for e in full.entries if e.action in (REMOVE, NARROW))
