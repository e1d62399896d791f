"""The Actions cache by ref, as the fake GitHub models it, and no job running a fork's code saving where main reads."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.github.fake_github import Caches, cache_ref, cache_write_ref
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


# --- 2026: which events write the default branch's scope, and no fork code under them ----------


def test_the_cache_token_is_read_only_for_untrusted_triggers_and_fork_prs():
    """GitHub's changelog of 2026-06-26: the trusted triggers on the default branch keep a read-write
    token into its scope; an untrusted trigger there, and a fork's `pull_request` run, get a read-only one."""
    for event in ("push", "schedule", "workflow_dispatch"):
        assert cache_write_ref(event) == MAIN
    for event in ("issue_comment", "pull_request_target", "workflow_run"):
        assert cache_write_ref(event) is None
    assert cache_write_ref("pull_request", fork=True, pr=7) is None
    assert cache_write_ref("pull_request", pr=7) == "refs/pull/7/merge"  # a same-repository PR's own scope


GATE = ("export-bot github verify-sha", "--same-repository")


def _refuses_a_fork(job: dict, evaluator: Evaluator) -> bool:
    """Whether the job runs a step that stops on a fork's head (verify-sha --same-repository, whose refusal
    of a fork PR tests/github/test_command.py checks against the fake) before any PR code is checked out."""
    for step in job.get("steps", []):
        if step.get("uses", "").startswith("actions/checkout@") and "repository" not in step.get("with", {}):
            return False  # the PR's code (or the default branch's) is in the workspace before the gate
        run = step.get("run", "")
        if all(part in run for part in GATE) and evaluator.condition(step.get("if")):
            return True
    return False


def fork_code_in_mains_scope(path, workflow: dict | None = None) -> list[str]:
    """Each job and event where a fork PR's code runs while the run's cache token writes the default
    branch's scope: code in the job can reach the token and plant a cache main's runs restore."""
    workflow = workflow or load(path)
    found = []
    for event in sorted(_events(path)):
        if cache_write_ref(event, fork=True, pr=7) != MAIN:
            continue
        results: dict[str, str] = {}
        pending = dict(workflow["jobs"])
        while pending:
            name, job = next((n, j) for n, j in pending.items() if set(_needs(j)) <= set(results))
            del pending[name]
            context = _context(workflow, job, event)
            for need in _needs(job):
                context["needs"][need]["result"] = results[need]
            wanted = [results[n] for n in _needs(job)]
            evaluator = Evaluator(context, status=lambda s, w=wanted: _status(s, w))
            if not evaluator.condition(job.get("if")):
                results[name] = "skipped"
            elif _refuses_a_fork(job, Evaluator(context)):
                results[name] = "failure"
            else:
                results[name] = "success"
                if _runs_pr_code(job, context):
                    found.append(f"{path.name} {name} on {event}")
    return found


def _needs(job: dict) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def _status(name: str, results: list[str]) -> bool:
    """GitHub's status functions in a job's `if:`, from the results of the jobs it needs."""
    return {
        "success": all(r == "success" for r in results),
        "failure": any(r == "failure" for r in results),
        "cancelled": False,
        "always": True,
    }[name]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_no_job_runs_a_forks_code_where_the_cache_token_writes_mains_scope(path):
    """A dispatched `/export-check` runs on the default branch with a read-write cache token: a fork PR's
    head is refused before any job checks it out, whatever the workflow's cache steps say."""
    assert fork_code_in_mains_scope(path) == []


def test_the_check_finds_a_dispatched_run_that_checks_a_forks_code_out():
    path = REUSABLE / "conformance.yml"
    workflow = load(path)
    for step in workflow["jobs"]["pinned"]["steps"]:
        step["run"] = step.get("run", "").replace(" --same-repository", "")
    assert fork_code_in_mains_scope(path, workflow) == [
        "conformance.yml select on workflow_dispatch",
        "conformance.yml shard on workflow_dispatch",
        "conformance.yml report on workflow_dispatch",
    ]
