"""The Actions cache by ref, as the fake GitHub models it, and no job running a fork's code saving where main reads."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.github.fake_github import Caches, cache_ref
from tests.rehearsal.expressions import Evaluator
from tests.test_workflows import CALLERS, REUSABLE, load

MAIN = "refs/heads/main"


def test_a_run_restores_its_own_refs_then_its_bases_then_the_default_branchs_caches():
    caches = Caches()
    caches.save("pip-1", MAIN, b"main")
    caches.save("pip-1", "refs/heads/feature", b"feature")
    assert caches.restore("pip-1", "refs/heads/feature")["data"] == b"feature"
    assert caches.restore("pip-1", "refs/heads/other")["data"] == b"main"  # the default branch's
    assert caches.restore("pip-1", "refs/pull/7/merge", base_ref="refs/heads/feature")["data"] == b"feature"
    assert caches.restore("pip-2", MAIN, restore_keys=("pip-",))["data"] == b"main"
    assert not caches.save("pip-1", MAIN, b"again"), "a key is saved once per ref"


def test_a_branchs_or_a_prs_cache_never_reaches_a_sibling_or_the_default_branch():
    caches = Caches()
    caches.save("pip-1", "refs/heads/feature", b"feature")
    caches.save("pip-1", cache_ref("pull_request", pr=7), b"fork")
    assert caches.restore("pip-1", "refs/heads/other") is None
    assert caches.restore("pip-1", MAIN) is None
    assert caches.restore("pip-1", cache_ref("pull_request", pr=8), base_ref=MAIN) is None
    # A dispatched run is on the default branch: what it saves, every branch and PR restores.
    caches.save("pip-2", cache_ref("workflow_dispatch"), b"dispatched")
    assert caches.restore("pip-2", cache_ref("pull_request", pr=8), base_ref=MAIN)["data"] == b"dispatched"


def test_the_caches_endpoint_lists_them_by_ref(fake):
    fake.caches.save("pip-1", MAIN)
    fake.caches.save("pip-1", cache_ref("pull_request", pr=7))
    request = urllib.request.Request(
        fake.api("/actions/caches?ref=refs/pull/7/merge"), headers={"Authorization": f"token {fake.token}"}
    )
    with urllib.request.urlopen(request) as answer:
        listed = json.load(answer)
    assert [(c["key"], c["ref"]) for c in listed["actions_caches"]] == [("pip-1", "refs/pull/7/merge")]


# --- the workflows: which jobs run a fork's code, and where their caches go ---------------------

# Values a checkout's `ref` takes from a pull request: a job checking one of them out runs its code.
PR_CODE = ("refs/pull/", "PR-HEAD", "QUEUE-HEAD", "PR-MERGE", "NEEDS-OUTPUT")


def _events(path) -> set[str]:
    """The events a workflow runs on: its own, or for a reusable one, those of the caller that calls it."""
    on = load(path)["on"]
    if "workflow_call" not in on:
        return set(on)
    callers = [
        caller
        for caller in sorted(CALLERS.glob("*.yml"))
        if any(f"/.github/workflows/{path.name}@" in job.get("uses", "") for job in load(caller)["jobs"].values())
    ]
    assert callers, f"no caller calls {path.name}"
    return {event for caller in callers for event in load(caller)["on"]}


def _context(workflow: dict, job: dict, event: str) -> dict:
    """What the expressions of a job see, each value a pull request gives marked as such."""
    declared = workflow["on"].get("workflow_call") or {}
    inputs = {k: v.get("default", "") for k, v in (declared.get("inputs") or {}).items()}
    if event == "workflow_dispatch" and "pr" in inputs:  # `/export-check`: a PR's run dispatched on main
        inputs.update(pr="7", sha="PR-HEAD")
    sha = {"pull_request": "PR-MERGE", "merge_group": "QUEUE-HEAD"}.get(event, "MAIN-SHA")
    upstream = job.get("needs", [])
    needs = {
        name: {"result": "success", "outputs": dict.fromkeys(workflow["jobs"][name].get("outputs", {}), "NEEDS-OUTPUT")}
        for name in ([upstream] if isinstance(upstream, str) else upstream)
    }
    github = {
        "event_name": event,
        "sha": sha,
        "repository": "huggingface/transformers",
        "event": {"pull_request": {"number": 7, "head": {"sha": "PR-HEAD"}}} if event == "pull_request" else {},
    }
    if event == "merge_group":
        github["event"] = {"merge_group": {"head_sha": "QUEUE-HEAD", "base_sha": "MAIN-SHA"}}
    return {"github": github, "inputs": inputs, "needs": needs, "matrix": {}, "strategy": {}}


def _runs_pr_code(job: dict, context: dict) -> bool:
    for step in job.get("steps", []):
        with_ = step.get("with", {})
        if not step.get("uses", "").startswith("actions/checkout@") or "repository" in with_:
            continue  # another repository (the bot's own checkout at its pinned ref)
        ref = Evaluator(context).render(with_.get("ref", "")) or ""
        # No ref: the event's own commit, a pull request's test merge or a queue's commit.
        if not ref and context["github"]["event_name"] in ("pull_request", "merge_group"):
            return True
        if any(marker in str(ref) for marker in PR_CODE):
            return True
    return False


def _caching_steps(job: dict, context: dict) -> list[str]:
    found = []
    for step in job.get("steps", []):
        uses = step.get("uses", "")
        if uses.startswith("actions/cache"):
            found.append(uses.split("@")[0])
        elif uses.startswith("actions/setup-") and Evaluator(context).render(step.get("with", {}).get("cache", "")):
            found.append(f"{uses.split('@')[0]} cache")
    return found


def fork_caches_main_reads(path, workflow: dict | None = None) -> list[str]:
    """Each job, event and cache step where a fork's code could save a cache that main's runs restore."""
    workflow = workflow or load(path)
    found = []
    for event in sorted(_events(path)):
        for name, job in workflow["jobs"].items():
            context = _context(workflow, job, event)
            caching = _caching_steps(job, context)
            if not caching or not _runs_pr_code(job, context):
                continue
            caches = Caches()
            caches.save("key", cache_ref(event, pr=7))
            read_by_main = caches.restore("key", MAIN) is not None
            read_by_a_sibling = caches.restore("key", cache_ref("pull_request", pr=8), base_ref=MAIN) is not None
            if read_by_main or read_by_a_sibling:
                found += [f"{path.name} {name} on {event}: {step}" for step in caching]
    return found


WORKFLOWS = sorted(REUSABLE.glob("*.yml")) + sorted(CALLERS.glob("*.yml"))


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_no_job_that_runs_a_forks_code_saves_a_cache_that_main_restores(path):
    """A PR's own run saves into its PR's scope, which nothing else reads; a dispatched `/export-check`
    runs on the default branch, whose caches every branch and PR restores, so it caches nothing.
    Restoring main's cache into a fork's run is allowed: it holds public downloads."""
    assert fork_caches_main_reads(path) == []


def test_the_check_finds_a_dispatched_run_of_a_forks_code_that_caches():
    path = REUSABLE / "conformance.yml"
    workflow = load(path)
    for step in workflow["jobs"]["shard"]["steps"]:
        if step.get("uses", "").startswith("actions/setup-python@"):
            step["with"]["cache"] = "pip"
    assert fork_caches_main_reads(path, workflow) == [
        "conformance.yml shard on workflow_dispatch: actions/setup-python cache"
    ]
    # A pull request's and a queue's runs cache into their own scope: not named.
    assert _events(path) == {"pull_request", "merge_group", "workflow_dispatch"}
