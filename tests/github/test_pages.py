"""The dashboard's Pages check, its own script run against the fake GitHub: no Pages, no deploy, a notice and a green sweep."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.test_workflows import REUSABLE, load

JOBS = load(REUSABLE / "baseline.yml")["jobs"]


def _pages_step(fake, tmp_path) -> tuple[dict[str, str], str, int]:
    """The step's outputs, its job summary and its exit code."""
    [step] = [s for s in JOBS["dashboard"]["steps"] if s.get("id") == "pages"]
    output, summary = tmp_path / "output", tmp_path / "summary.md"
    output.touch()
    summary.touch()
    env = dict(
        os.environ,
        GITHUB_TOKEN=fake.token,
        REPOSITORY=fake.full_name,
        GITHUB_API_URL=fake.url,
        GITHUB_OUTPUT=str(output),
        GITHUB_STEP_SUMMARY=str(summary),
    )
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True)
    found = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return found, summary.read_text() + done.stdout, done.returncode


@pytest.mark.skipif(shutil.which("curl") is None, reason="the step asks GitHub with curl, as a runner has it")
@pytest.mark.parametrize("pages, enabled", [("workflow", "true"), ("legacy", "false"), (None, "false")])
def test_the_dashboard_deploys_only_where_pages_publishes_from_actions(fake, tmp_path, pages, enabled):
    fake.pages = pages
    outputs, said, code = _pages_step(fake, tmp_path)
    assert code == 0 and outputs == {"enabled": enabled}
    if enabled == "false":
        assert "The dashboard was not published" in said and "::notice title=dashboard::" in said
        assert "dashboard: false" in said
    else:
        assert said == ""


def test_every_step_after_the_check_and_the_deploy_wait_for_pages():
    """Without Pages nothing is built or uploaded, and the deploy job, which would fail, is skipped."""
    steps = JOBS["dashboard"]["steps"]
    # The deploy also waits for no newer sweep (docs/github.md, "Main's state"): an older site never lands last.
    deploy = "${{ steps.pages.outputs.enabled == 'true' && steps.history.outputs.superseded != 'true' }}"
    assert steps[0]["id"] == "pages" and JOBS["dashboard"]["outputs"]["pages"] == deploy
    assert all(s["if"] == "steps.pages.outputs.enabled == 'true'" for s in steps[1:])
    assert JOBS["dashboard-deploy"]["if"] == "needs.dashboard.outputs.pages == 'true'"
    assert JOBS["dashboard"]["permissions"]["pages"] == "read"
