"""The obsolete-skip flow on main: one branch and one PR, opened, updated in place, closed when nothing is left."""

from __future__ import annotations

import pytest

from bot.publish.obsolete_skips import BRANCH, MARKER
from bot.report import write_report
from tests.conftest import SKIPLISTS
from tests.github.conftest import make_report, report_zip
from tests.github.payloads import push_event

GDINO = "MMGroundingDinoForObjectDetection::test_onnx_export_dynamic"
BIGBIRD = "BigBirdForMultipleChoice::test_openvino_export_dynamic"


def _sweep(fake, gh, tmp_path, run_id, passing, failing=()):
    """One baseline sweep on main: its report is this run's; earlier sweeps' reports are the history."""
    cells = [(c, "passed", True) for c in passing] + [(c, "failed", True) for c in failing]
    report = make_report(head_sha=fake.state.refs["heads/main"], cells=cells)
    path = tmp_path / f"report-{run_id}.json"
    write_report(report, path)
    result = gh(
        "obsolete-skips",
        "--report",
        str(path),
        "--skiplists",
        str(SKIPLISTS),
        "--min-passes",
        "3",
        event=push_event(repo=fake.repo, after=fake.state.refs["heads/main"]),
        env={"GITHUB_RUN_ID": str(run_id)},
    )
    fake.add_run(
        "export-baseline.yml", head_sha=fake.state.refs["heads/main"], artifacts={"export-baseline": report_zip(report)}
    )
    assert result.exit_code == 0, result.output
    return result.output.strip()


def _open_pulls(fake):
    return [pr for pr in fake.state.pulls.values() if pr["head_ref"] == BRANCH and pr["state"] == "open"]


def test_opened_then_updated_in_place_then_closed(fake, gh, tmp_path):
    # K = 3: two passing sweeps are not enough.
    assert _sweep(fake, gh, tmp_path, 11, [GDINO]) == "nothing to remove, no PR open"
    assert _sweep(fake, gh, tmp_path, 12, [GDINO, BIGBIRD]) == "nothing to remove, no PR open"
    opened = _sweep(fake, gh, tmp_path, 13, [GDINO, BIGBIRD])
    [pr] = _open_pulls(fake)
    assert opened == f"opened #{pr['number']}"
    assert pr["body"].startswith(MARKER)
    assert "remove `export_skips.toml` `[onnx.dynamic]` **MMGroundingDinoForObjectDetection**" in pr["body"]
    assert f"`{GDINO}`" in pr["body"] and "BigBird" not in pr["body"]  # BigBird has passed twice only
    first_head = fake.state.refs[f"heads/{BRANCH}"]
    files = fake.files_at(first_head)
    assert (
        'MMGroundingDinoForObjectDetection = "Same as `GroundingDinoModel`."'
        not in files["skiplists/export_skips.toml"]
    )
    assert fake.state.commits[first_head]["parents"] == [fake.state.refs["heads/main"]]

    updated = _sweep(fake, gh, tmp_path, 14, [GDINO, BIGBIRD])
    assert updated == f"updated #{pr['number']}" and _open_pulls(fake) == [pr]
    assert "**BigBirdForMultipleChoice**" in pr["body"] and f"`{BIGBIRD}`" in pr["body"]
    assert fake.state.refs[f"heads/{BRANCH}"] != first_head  # force-updated, still one commit on main
    assert fake.state.commits[fake.state.refs[f"heads/{BRANCH}"]]["parents"] == [fake.state.refs["heads/main"]]

    # The skips are needed again: nothing is left, the PR is closed and the branch removed.
    closed = _sweep(fake, gh, tmp_path, 15, [], failing=[GDINO, BIGBIRD])
    assert closed == f"closed #{pr['number']}" and pr["state"] == "closed"
    assert f"heads/{BRANCH}" not in fake.state.refs
    assert _sweep(fake, gh, tmp_path, 16, []) == "nothing to remove, no PR open"
    assert len([p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]) == 1


@pytest.mark.parametrize("history", [0, 1])
def test_short_history_removes_nothing(fake, gh, tmp_path, history):
    for n in range(history):
        _sweep(fake, gh, tmp_path, 20 + n, [GDINO])
    assert _sweep(fake, gh, tmp_path, 30, [GDINO]) == "nothing to remove, no PR open"
