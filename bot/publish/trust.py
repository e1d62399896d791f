"""Which runs may affect what: decided from GitHub's own run records, never from what an artifact says (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.publish.events import command_pr_of
from bot.publish.github_api import PullRequest, WorkflowRun

# The events of the base repository's own sweeps: a fork can trigger none of them here.
SWEEP_EVENTS = frozenset({"push", "schedule", "workflow_dispatch"})
# The events of the runs that may hold a full sweep (the nightly schedule, or a dispatch with `full`):
# a push measures only what it selects. Listed by these alone, ~20 pushes a day never crowd the
# sweeps of a week out of the runs the API's listing reaches (docs/github.md, the obsolete-skip PR).
FULL_SWEEP_EVENTS = frozenset({"schedule", "workflow_dispatch"})


def is_sweep(run: WorkflowRun, repository: str, default_branch: str) -> bool:
    """A run of the base repository on its default branch: the only kind a baseline, the dashboard's
    history or obsolete-skip evidence may come from. A fork's run on a branch it named `main` is not one."""
    return run.head_repo == repository and run.event in SWEEP_EVENTS and run.head_branch == default_branch


def runs_workflow(run_path: str, workflow: str) -> bool:
    """Whether a run ran `workflow` (a file name) of this repository: matched by path, since any
    workflow, a fork's included, may call itself by another's name."""
    return run_path == f".github/workflows/{workflow}"


@dataclass(frozen=True)
class ProposalSource:
    """A run whose report's proposal `apply` may commit; `pinned` is set when the report itself must
    state the PR's head (a dispatched run checks out the pinned head, its record shows the default branch's)."""

    run: WorkflowRun
    pinned: str | None = None


def proposal_source(run: WorkflowRun, pull: PullRequest, repository: str) -> ProposalSource | None:
    """The run as a source of `pull`'s proposal, or None when GitHub's record ties it to something else.

    Accepted: the PR's own `pull_request` run (head repository and head SHA are the PR's), a push
    run of this repository on the PR's branch at its head, or a run dispatched in this repository whose title (the default branch's `run-name`) names this PR,
    for the PR's current head. A fork's run is never a source for a same-repository PR, whatever
    its report claims.
    """
    if run.head_repo is None:
        return None
    if run.event == "pull_request":
        own = run.head_repo == pull.head_repo and run.head_sha == pull.head_sha
        return ProposalSource(run) if own else None
    if run.event == "push":
        # A push to the PR's own branch in this repository: the same commit from the same place.
        own = run.head_repo == repository == pull.head_repo and run.head_branch == pull.head_ref
        return ProposalSource(run) if own and run.head_sha == pull.head_sha else None
    if run.event == "workflow_dispatch":
        # `apply` commits to this repository's branches only: the dispatched run must be this
        # repository's, and so must the PR it names.
        named = command_pr_of(run.title) == pull.number
        own = run.head_repo == repository and pull.head_repo == repository and named
        return ProposalSource(run, pinned=pull.head_sha) if own else None
    return None


def own_pulls(run: WorkflowRun, candidates: list[PullRequest], repository: str) -> tuple[PullRequest, ...]:
    """The open PRs a run belongs to, from GitHub's records: those it lists (same-repository heads),
    else, for a fork's run, the PRs whose head repository, branch and commit are the run's."""
    if run.pull_requests:
        return tuple(p for p in candidates if p.number in run.pull_requests and p.state == "open")
    return tuple(
        p
        for p in candidates
        if p.state == "open"
        and p.head_repo == run.head_repo
        and p.head_ref == run.head_branch
        and p.head_sha == run.head_sha
    )


def status_refusal(
    sha: str, pull: PullRequest, repository: str, base_branches_at_sha: list[str], other_pulls: tuple[int, ...] = ()
) -> str | None:
    """Why the `export-conformance` status must not be set on `sha` for `pull`, or None when it may.

    The status belongs to a commit, not a PR: it shows on every PR whose head that commit is. It is
    set only on the PR's current head, and a fork's run never sets it on a commit that heads a branch
    of this repository, or another repository's open PR here (a fork can push anyone's public commit
    to its own branch, another fork PR's head included).
    """
    if sha != pull.head_sha:
        return f"#{pull.number}'s head is {pull.head_sha[:12]}, not this run's {sha[:12]}: no status"
    return fork_refusal(sha, pull.head_repo, repository, base_branches_at_sha, other_pulls)


def fork_refusal(
    sha: str,
    head_repo: str | None,
    repository: str,
    base_branches_at_sha: list[str],
    other_pulls: tuple[int, ...] = (),
) -> str | None:
    """Why a run whose head came from `head_repo` must not set a status (pending or verdict) on `sha`:
    a fork's run never does on a commit that heads a branch of this repository, or an open PR here from
    another repository (`other_pulls`), where it would stand beside, or hold back, that PR's own status.
    None when it may."""
    if head_repo != repository and base_branches_at_sha:
        shown = ", ".join(sorted(base_branches_at_sha)[:3])
        return f"{sha[:12]} also heads {shown} of {repository}: a fork's run sets no status there"
    if head_repo != repository and other_pulls:
        shown = ", ".join(f"#{n}" for n in sorted(other_pulls)[:3])
        return f"{sha[:12]} also heads {shown}, from another repository: a fork's run sets no status there"
    return None
