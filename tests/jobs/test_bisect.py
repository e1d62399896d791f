"""`export-bot bisect` on a real git repository: five commits after the last pass, the third breaks the toy model."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cells import Cell
from bot.cli import main
from bot.outcomes import CellResult, Status
from bot.results.baseline import Baseline, Measurement, Segment, regressions
from bot.results.baseline_json import dumps, loads
from bot.skiplist.model import load_skiplists
from tests.conftest import SKIPLISTS
from tests.e2e.checkout import HERE, MODELING, commit_all, git, make_toy_repo, write

CELL = Cell("ToyModel", "dynamo")  # ToyModel::test_torch_export_static: one cheap export


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> tuple[Path, list[str]]:
    """main: the toy model (good), then five commits; the third adds a data-dependent branch."""
    repo = tmp_path_factory.mktemp("bisect") / "toy"
    make_toy_repo(repo)
    git(repo, "checkout", "-q", "main")
    commits = [git(repo, "rev-parse", "HEAD")]
    for i in range(1, 6):
        write(repo / "NOTES.md", f"change {i}\n")
        if i == 3:
            write(repo / MODELING, (HERE / "guard" / "modeling_toy.py").read_text(encoding="utf-8"))
        commits.append(commit_all(repo, f"change {i}"))
    return repo, commits


def state(commits: list[str]) -> Baseline:
    """A push of the good commit, then one push of the five; the sweep measured the cell at both ends."""
    segments = (Segment(None, (commits[0],), 1), Segment(commits[0], tuple(commits[1:]), 2))

    def at(sha: str, ok: bool, run_id: int) -> Measurement:
        status = Status.PASSED if ok else Status.FAILED
        message = "" if ok else "torch._dynamo.exc.UserError: Could not guard on data-dependent expression"
        return Measurement(
            sha, "2026-12-01T00:00:00Z", run_id, "sweep", CellResult(CELL, status, "export", message=message)
        )

    return Baseline(segments=segments, cells={CELL: (at(commits[5], False, 11), at(commits[0], True, 10))})


def run_bisect(tmp_path: Path, repo: Path, baseline: Baseline, *extra: str):
    (tmp_path / "baseline.json").write_text(dumps(baseline), encoding="utf-8")
    skiplists = tmp_path / "skiplists"
    if not skiplists.exists():
        shutil.copytree(SKIPLISTS, skiplists)
    args = ["bisect", "--repo", str(repo), "--state", str(tmp_path / "baseline.json"), "--skiplists", str(skiplists)]
    args += ["--out", str(tmp_path / "out.json"), "--work", str(tmp_path / "work"), "--run-args", "-n 0"]
    args += ["--repeats", "0", *extra]  # a real export per run: the re-runs are tested in test_bisect_confirm.py
    return CliRunner().invoke(main, args, catch_exceptions=False)


def written(tmp_path: Path) -> Baseline:
    """The state `run_bisect` wrote."""
    return loads((tmp_path / "out.json").read_text(encoding="utf-8"), where="out.json")


def test_the_bisect_names_the_commit_that_broke_the_cell(tmp_path, history):
    repo, commits = history
    got = run_bisect(tmp_path, repo, state(commits))
    assert got.exit_code == 0, got.output
    assert f"culprit {commits[3][:12]}: 1 cells" in got.output and "bisect: 2 steps" in got.output
    after = written(tmp_path)
    bisected = {m.commit: m.result.status for m in after.cells[CELL] if m.source == "bisect"}
    assert bisected == {commits[3]: Status.FAILED, commits[2]: Status.PASSED}  # the middle first, then below it
    [found] = regressions(after, lambda cell: load_skiplists(SKIPLISTS).explain(cell).skipped)
    assert found.culprit == commits[3] and found.good.commit == commits[2]
    assert git(repo, "worktree", "list").count("\n") == 0  # every step's worktree is gone


def test_out_of_budget_it_stops_cleanly_and_says_what_is_left(tmp_path, history):
    repo, commits = history
    got = run_bisect(tmp_path, repo, state(commits), "--max-steps", "1")
    assert got.exit_code == 0, got.output
    assert (
        "bisect: 1 steps" in got.output and "out of budget: between" in got.output and "(3 commits left)" in got.output
    )
    after = written(tmp_path)
    [open_range] = regressions(after, lambda cell: load_skiplists(SKIPLISTS).explain(cell).skipped)
    assert open_range.culprit is None and open_range.candidates == tuple(commits[1:4])


def test_a_step_whose_run_fails_gives_no_result_and_the_next_commit_is_tried(tmp_path, history):
    repo, commits = history
    got = run_bisect(tmp_path, repo, state(commits), "--max-steps", "2", "--run-args", "--no-such-option")
    assert got.exit_code == 0, got.output
    assert "bisect: 2 steps" in got.output and "out of budget" in got.output
    after = written(tmp_path)
    assert all(m.source != "bisect" for m in after.cells[CELL])


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, history):
    repo, commits = history
    got = run_bisect(tmp_path, tmp_path, state(commits))
    assert got.exit_code == 2 and "not a git checkout" in got.output and not (tmp_path / "out.json").exists()
    (tmp_path / "bad.json").write_text("[", encoding="utf-8")
    args = ["bisect", "--repo", str(repo), "--state", str(tmp_path / "bad.json"), "--skiplists", str(SKIPLISTS)]
    got = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o.json"), "--run-args", "'unbalanced"])
    assert got.exit_code == 2 and "--run-args" in got.output and not (tmp_path / "o.json").exists()
    got = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "o.json")])
    assert got.exit_code == 2 and "bad.json" in got.output and not (tmp_path / "o.json").exists()


def test_commits_missing_from_the_clone_give_no_result_and_the_range_is_undecided(tmp_path, history):
    repo, commits = history
    missing = [f"{i:x}" * 40 for i in range(1, 6)]  # a shallow clone has none of these
    baseline = state([commits[0], *missing[:4], commits[5]])
    got = run_bisect(tmp_path, repo, baseline)
    assert got.exit_code == 0, got.output
    assert (
        "bisect: 4 steps" in got.output and f"undecided between {commits[0][:12]} and {commits[5][:12]}" in got.output
    )
    assert written(tmp_path).cells == baseline.cells


def test_no_time_left_runs_nothing_and_writes_the_state_as_given(tmp_path, history):
    repo, commits = history
    got = run_bisect(tmp_path, repo, state(commits), "--max-minutes", "0")
    assert got.exit_code == 0, got.output
    assert (
        "bisect: 0 steps" in got.output and "out of budget: between" in got.output and "(5 commits left)" in got.output
    )
    assert written(tmp_path).cells == state(commits).cells


def test_a_relative_work_folder_named_like_an_option_still_bisects(tmp_path, history, monkeypatch):
    """`--work -w`: git runs in --repo and the step in its checkout, so the folder is made absolute, and
    `--end-of-options` keeps git from reading `-w/step-…` as an option."""
    repo, commits = history
    monkeypatch.chdir(tmp_path)
    got = run_bisect(tmp_path, repo, state(commits), "--work", "-w")
    assert got.exit_code == 0, got.output
    assert f"culprit {commits[3][:12]}: 1 cells" in got.output, got.output
    assert (tmp_path / "-w").is_dir() and not (repo / "-w").exists()


def test_an_out_that_cannot_be_written_is_refused_before_any_step(tmp_path, history):
    repo, commits = history
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way of --out's folder")
    (tmp_path / "baseline.json").write_text(dumps(state(commits)), encoding="utf-8")
    args = ["bisect", "--repo", str(repo), "--state", str(tmp_path / "baseline.json"), "--skiplists", str(SKIPLISTS)]
    args += ["--out", str(blocker / "out.json"), "--work", str(tmp_path / "work"), "--run-args", "-n 0"]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 2 and "is a file" in got.output, got.output
    assert not list((tmp_path / "work").glob("step-*"))  # no step ran
