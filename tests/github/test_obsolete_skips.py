"""The obsolete-skip flow on main: one branch and one PR, opened, updated in place, closed when nothing is left."""

from __future__ import annotations

import json

import pytest

from bot.publish.obsolete_skips import BRANCH, MARKER, fingerprint, render_body, title_for
from bot.results import ResultSet
from bot.results.baseline import measured
from bot.results.baseline_json import dumps, read_state
from tests.conftest import SKIPLISTS
from tests.github.conftest import make_report, outputs, zipped
from tests.github.payloads import push_event

GDINO = "MMGroundingDinoForObjectDetection::test_onnx_export_dynamic"
BIGBIRD = "BigBirdForMultipleChoice::test_openvino_export_dynamic"
RUNS = "https://github.com/Codertocat/Hello-World/actions/runs/"


def _night(fake, gh, passing, failing=(), *extra):
    """One baseline run on main: its sweep uploads the baseline artifact (with this sweep's report.json),
    then its obsolete-skips job reads that artifact and the earlier runs' ones. Returns (run id, result)."""
    cells = [(c, "passed", True) for c in passing] + [(c, "failed", True) for c in failing]
    report = make_report(head_sha=fake.state.refs["heads/main"], cells=cells)
    artifact = zipped({"report.json": json.dumps(report.to_json()), "baseline.json": _state(fake)})
    run_id = fake.add_run(
        "export-baseline.yml",
        head_sha=fake.state.refs["heads/main"],
        status="in_progress",
        event="schedule",  # the nightly run sweeps; a push measures only what it selects
        artifacts={"export-baseline": artifact},
    )
    result = gh(
        "obsolete-skips",
        "--skiplists",
        str(SKIPLISTS),
        "--min-passes",
        "3",
        *extra,
        event=push_event(repo=fake.repo, after=fake.state.refs["heads/main"]),
        env={"GITHUB_RUN_ID": str(run_id)},
    )
    # The job's exit decides the run's conclusion, as on GitHub.
    fake.finish_run(run_id, "success" if result.exit_code == 0 else "failure")
    return run_id, result


def _state(fake) -> str:
    """The night's baseline state: a full sweep of main, dated by the night (the runs so far, plus this one)."""
    main = fake.state.refs["heads/main"]
    # The nights so far, wrapped round so a seeded backlog still makes a valid date.
    stamp = f"2026-12-{sum(r['event'] == 'schedule' for r in fake.state.runs) % 28 + 1:02d}T00:00:00Z"
    sweep = measured(ResultSet(), commit=main, time=stamp, run_id=0, source="sweep", segment=None, full=True)
    return dumps(sweep)


def _sweep(fake, gh, passing, failing=(), *extra):
    _, result = _night(fake, gh, passing, failing, *extra)
    assert result.exit_code == 0, result.output
    return result.output.strip()


def _open_pulls(fake):
    return [pr for pr in fake.state.pulls.values() if pr["head_ref"] == BRANCH and pr["state"] == "open"]


def _ours(fake):
    return [pr for pr in fake.state.pulls.values() if pr["head_ref"] == BRANCH]


def test_opened_then_updated_in_place_then_closed(fake, gh):
    # K = 3: two passing sweeps are not enough.
    assert _sweep(fake, gh, [GDINO]) == "nothing to remove, no PR open"
    assert _sweep(fake, gh, [GDINO, BIGBIRD]) == "nothing to remove, no PR open"
    opened = _sweep(fake, gh, [GDINO, BIGBIRD])
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

    updated = _sweep(fake, gh, [GDINO, BIGBIRD])
    assert updated == f"updated #{pr['number']}" and _open_pulls(fake) == [pr]
    assert "**BigBirdForMultipleChoice**" in pr["body"] and f"`{BIGBIRD}`" in pr["body"]
    removals = pr["body"].count("\n- remove ")
    assert removals > 1 and pr["title"] == f"Skiplists: remove {removals} obsolete skips"
    assert fake.state.refs[f"heads/{BRANCH}"] != first_head  # force-updated, still one commit on main
    assert fake.state.commits[fake.state.refs[f"heads/{BRANCH}"]]["parents"] == [fake.state.refs["heads/main"]]

    # The skips are needed again: nothing is left, the PR is closed and the branch removed.
    closed = _sweep(fake, gh, [], failing=[GDINO, BIGBIRD])
    assert closed == f"closed #{pr['number']}" and pr["state"] == "closed"
    assert f"heads/{BRANCH}" not in fake.state.refs
    assert _sweep(fake, gh, []) == "nothing to remove, no PR open"
    assert len(_ours(fake)) == 1


@pytest.mark.parametrize("history", [0, 1])
def test_short_history_removes_nothing(fake, gh, history):
    for _ in range(history):
        _sweep(fake, gh, [GDINO])
    assert _sweep(fake, gh, [GDINO]) == "nothing to remove, no PR open"


def test_the_pr_links_the_k_runs_that_are_its_evidence_and_says_what_it_does(fake, gh):
    ids = [_night(fake, gh, [GDINO])[0] for _ in range(3)]
    [pr] = _open_pulls(fake)
    removals = pr["body"].count("\n- remove ")
    assert pr["title"] == f"Skiplists: remove {removals} obsolete skip{'s' if removals > 1 else ''}"
    for run_id in ids:
        assert f"[run {run_id}]({RUNS}{run_id})" in pr["body"]
    assert "the 3 sweeps (oldest first)" in pr["body"]


def test_a_closed_pr_is_respected_until_the_edit_or_its_evidence_changes(fake, gh):
    for _ in range(3):
        _sweep(fake, gh, [GDINO])
    [pr] = _open_pulls(fake)
    fake.close_pull(pr["number"])  # a maintainer declines it
    for _ in range(2):
        assert "was closed for this same edit" in _sweep(fake, gh, [GDINO])
    assert len(_ours(fake)) == 1
    # BigBird has now passed in three sweeps in a row: the edit changed, so it is proposed again.
    for _ in range(2):
        assert "was closed for this same edit" in _sweep(fake, gh, [GDINO, BIGBIRD])
    assert _sweep(fake, gh, [GDINO, BIGBIRD]).startswith("opened #")
    [again] = _open_pulls(fake)
    assert again["number"] != pr["number"] and "**BigBirdForMultipleChoice**" in again["body"]


def test_a_merged_or_bot_closed_pr_does_not_block_a_new_one(fake, gh):
    for _ in range(3):
        _sweep(fake, gh, [GDINO])
    [pr] = _open_pulls(fake)
    fake.close_pull(pr["number"], merged=True)  # merged, then (say) reverted on main
    assert _sweep(fake, gh, [GDINO]).startswith("opened #")


def test_a_pr_answered_502_after_it_was_opened_is_one_pr_and_a_green_job(fake, gh):
    for _ in range(2):
        _sweep(fake, gh, [GDINO])
    fake.inject("status", method="POST", path=r"/pulls$", times=2, status=502, after=True)
    fake.inject("status", method="POST", path=r"/git/refs$", times=2, status=502, after=True)
    opened = _sweep(fake, gh, [GDINO])
    [pr] = _ours(fake)
    assert opened == f"opened #{pr['number']}" and pr["state"] == "open" and pr["body"].startswith(MARKER)
    assert f"heads/{BRANCH}" in fake.state.refs
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/pulls")) == 1
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/git/refs")) == 1


def test_four_failing_nights_still_leave_prs_diffing_against_the_newest_sweep(fake, gh, tmp_path):
    for _ in range(2):
        _sweep(fake, gh, [GDINO])
    # The repository forbids Actions to open PRs: from now on every night's obsolete-skip job fails.
    fake.pull_creation_forbidden = True
    for night in range(1, 5):
        run_id, result = _night(fake, gh, [GDINO])
        assert result.exit_code == 2
        # GitHub's reason is in the printed error; the failed nights still count as history.
        assert "HTTP 403 GitHub Actions is not permitted to create or approve pull requests" in result.output
        out = tmp_path / f"base-{night}"
        assert gh("baseline", "--out", str(out)).exit_code == 0
        # The newest sweep is the failed night's: its full sweep heads the folded state.
        newest_sweep = read_state(out / "baseline.json").full_sweeps[0]
        assert newest_sweep[1] == f"2026-12-{len(fake.state.runs):02d}T00:00:00Z"
        assert outputs(gh.output)["found"] == "true"
    assert [r["conclusion"] for r in fake.state.runs][-4:] == ["failure"] * 4
    fake.pull_creation_forbidden = False
    last, result = _night(fake, gh, [GDINO])
    assert result.exit_code == 0 and result.output.startswith("opened #")
    [pr] = _open_pulls(fake)
    failed_nights = [r["id"] for r in fake.state.runs][-3:-1]
    for run_id in (*failed_nights, last):
        assert f"[run {run_id}]({RUNS}{run_id})" in pr["body"]


def test_the_title_says_remove_or_narrow():
    remove = {"action": "remove", "file": "f.toml", "scope": "onnx", "model_class": "A", "evidence": ["A::t"]}
    narrow = dict(remove, action="narrow", model_class="B", new_scopes=["onnx.static"], still_failing=["B::s"])
    assert title_for([remove]) == "Skiplists: remove 1 obsolete skip"
    assert title_for([narrow]) == "Skiplists: narrow 1 skip to the cells that still fail"
    assert title_for([remove, narrow, dict(remove, model_class="C")]) == (
        "Skiplists: remove 2 obsolete skips, narrow 1 skip to the cells that still fail"
    )


def test_the_fingerprint_follows_the_edit_and_its_cells_not_the_runs():
    entry = {"action": "remove", "file": "f.toml", "scope": "onnx", "model_class": "A", "evidence": ["A::t"]}
    assert fingerprint([entry]) == fingerprint([dict(entry)])
    assert fingerprint([entry]) != fingerprint([dict(entry, evidence=["A::t", "A::u"])])
    assert fingerprint([entry]) != fingerprint([dict(entry, action="narrow", new_scopes=["onnx.static"])])
    one = render_body([entry], min_passes=3, runs=[])
    assert f"<!-- export-bot:edit {fingerprint([entry])} -->" in one


def test_a_base_branch_that_does_not_exist_is_one_line_and_exit_2(fake, gh, tmp_path):
    # One probe decides (--min-passes 1): the removal is ready, but the branch it would go on is not there.
    report = make_report(head_sha=fake.state.refs["heads/main"], cells=[(GDINO, "passed", True)])
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_json()), encoding="utf-8")
    result = gh(
        "obsolete-skips",
        "--skiplists",
        str(SKIPLISTS),
        "--min-passes",
        "1",
        "--branch",
        "trunk",
        "--report",
        str(path),
        event=push_event(repo=fake.repo, after=fake.state.refs["heads/main"]),
    )
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "branch trunk does not exist" in errors[0], result.output
    assert _ours(fake) == []


def test_the_pr_keeps_what_main_merged_during_the_sweep_and_gets_its_required_check(fake, gh):
    """The sweep takes hours: its edits land on main's skiplists as they are when the PR is made.

    And the PR's pushes use the workflow token, which starts no workflow: the conformance run is
    dispatched for the PR's head, or the required check would never report.
    """
    _sweep(fake, gh, [GDINO])
    _sweep(fake, gh, [GDINO])
    main = fake.state.refs["heads/main"]
    path = "skiplists/export_skips.toml"
    anchor = '["onnx.dynamic"]\n'
    text = fake.files_at(main)[path]
    assert anchor in text
    merged = text.replace(anchor, anchor + 'NewModel = "Merged while the sweep ran."\n', 1)
    fake.state.refs["heads/main"] = fake.commit({path: merged}, parents=(main,), message="a skip merged meanwhile")
    done = _sweep(fake, gh, [GDINO], (), "--dispatch", "export-conformance.yml")
    [pr] = _open_pulls(fake)
    head = fake.state.refs[f"heads/{BRANCH}"]
    assert done == f"opened #{pr['number']}; dispatched export-conformance.yml for #{pr['number']} at {head[:12]}"
    files = fake.files_at(head)
    assert 'NewModel = "Merged while the sweep ran."' in files[path]  # kept, not reverted to the sweep's copy
    section = files[path].split(anchor)[1].split("\n[")[0]
    assert "MMGroundingDinoForObjectDetection" not in section and "NewModel" in section
    [dispatched] = [d for d in fake.state.dispatches if d["workflow"] == "export-conformance.yml"]
    assert dispatched["ref"] == "main"
    assert (dispatched["inputs"]["pr"], dispatched["inputs"]["sha"]) == (str(pr["number"]), head)
    assert json.loads(dispatched["inputs"]["request"])["kind"] == "rerun"


def _pushes(fake, count: int) -> None:
    """Pushes to main between two nights: baseline runs that measure what they select and never sweep."""
    for _ in range(count):
        fake.add_run("export-baseline.yml", head_sha=fake.state.refs["heads/main"], event="push")


def test_a_week_of_pushes_between_sweeps_never_hides_the_earlier_sweeps(fake, gh):
    """At ~20 pushes a day, the newest runs of every event together hold ~3 days: the sweeps a week
    apart are listed by their own events (`schedule`, `workflow_dispatch`), and the PR stays up to date."""
    for _ in range(3):
        _sweep(fake, gh, [GDINO])
        _pushes(fake, 140)
    [pr] = _open_pulls(fake)
    assert _sweep(fake, gh, [GDINO]) == f"updated #{pr['number']}" and pr["state"] == "open"
    assert ("GET", "/repos/Codertocat/Hello-World/actions/workflows/export-baseline.yml/runs") in fake.requests


def test_too_short_a_history_never_closes_the_open_pr(fake, gh):
    for _ in range(3):
        _sweep(fake, gh, [GDINO])
    [pr] = _open_pulls(fake)
    # The earlier sweeps' artifacts expired: this sweep alone cannot tell a needed skip from an obsolete one.
    for artifact in fake.state.artifacts.values():
        artifact["expired"] = True
    said = _sweep(fake, gh, [GDINO])
    assert (
        said.startswith(f"#{pr['number']} left as it is: 0 earlier sweep(s) found of the 2") and pr["state"] == "open"
    )
    assert f"heads/{BRANCH}" in fake.state.refs


def test_a_new_pr_gets_its_labels_reviewers_and_draft_state_and_an_update_leaves_them_to_the_maintainers(fake, gh):
    dressed = ("--labels", "export-bot, skiplists", "--reviewers", "octocat,huggingface/export", "--draft", "true")
    for _ in range(2):
        assert _sweep(fake, gh, [GDINO], (), *dressed) == "nothing to remove, no PR open"
    opened = _sweep(fake, gh, [GDINO], (), *dressed)
    [pr] = _open_pulls(fake)
    number = pr["number"]
    assert opened == (
        f"opened #{number} as a draft, labelled export-bot, skiplists, review asked of octocat, huggingface/export"
    )
    assert pr["draft"] is True
    assert fake.state.issues[number]["labels"] == ["export-bot", "skiplists"]
    assert (pr["requested_reviewers"], pr["requested_teams"]) == (["octocat"], ["export"])
    # A maintainer takes a label off and the review is done: the next sweep's update puts neither back.
    fake.state.issues[number]["labels"].remove("skiplists")
    pr["requested_reviewers"].clear()
    assert _sweep(fake, gh, [GDINO], (), *dressed) == f"updated #{number}"
    assert fake.state.issues[number]["labels"] == ["export-bot"] and pr["requested_reviewers"] == []


def test_without_the_options_the_pr_is_ready_for_review_and_bare(fake, gh):
    for _ in range(3):
        _sweep(fake, gh, [GDINO])
    [pr] = _open_pulls(fake)
    assert not pr.get("draft") and not fake.state.issues[pr["number"]].get("labels")
    assert not pr.get("requested_reviewers")
