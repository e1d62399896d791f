"""The bisect confirms the break at both ends and at the culprit, and installs each commit: real git, real JUnit.

Each commit of a real repository says in `cell.txt` how the cell does there (`pass`, `fail`, or
`fail-but-try K`: fails except on the K-th run at that commit). The runner reads it from the step's
own worktree and writes real JUnit, so what is run where is the bisect's doing; the exports
themselves are tested with a real run in tests/jobs/test_bisect.py. `pip` is a script that records
what it was asked and installs nothing (the shared environment is never touched).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from bot.cells import Cell
from bot.jobs.bisect import BisectInputs, bisect
from bot.jobs.bisect_plan import install_args, pins_of
from bot.outcomes import CellResult, Status
from bot.results.baseline import Baseline, Measurement, Segment, regressions
from bot.results.baseline_json import dumps, loads
from bot.results.bisected import FLAKY, NOT_REPRODUCIBLE, unsettled
from tests.conftest import SKIPLISTS
from tests.e2e.checkout import commit_all, git, write
from tests.results.factory import Case, junit

CELL = Cell("ToyModel", "dynamo")
PIP = """import pathlib, sys
folder = pathlib.Path(sys.argv[-1])
with open(sys.argv[1], "a") as log:
    log.write(" ".join([folder.name.split("-")[0], *sys.argv[2:-2]]) + "\\n")
sys.exit(1 if (folder / "unbuildable").exists() else 0)
"""


def make_history(repo: Path, verdicts: list[str], *, pins_change_at: int | None = None) -> list[str]:
    """main: one commit per verdict (the first is the last known pass); pyproject.toml changes at one."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commits = []
    for i, verdict in enumerate(verdicts):
        write(repo / "cell.txt", verdict + "\n")
        pins = "torch>=2.12" if pins_change_at is None or i < pins_change_at else "torch>=2.13"
        write(repo / "pyproject.toml", f'[project]\nname = "toy"\ndependencies = ["{pins}"]\n')
        write(repo / "NOTES.md", f"change {i}\n")
        commits.append(commit_all(repo, f"change {i}"))
    return commits


def state(commits: list[str]) -> Baseline:
    """A push of the first commit, then one push of the rest; the sweep saw a pass first, a failure last."""
    segments = (Segment(None, (commits[0],), 1), Segment(commits[0], tuple(commits[1:]), 2))
    failed = CellResult(CELL, Status.FAILED, "export", message="torch._dynamo.exc.UserError: data-dependent")

    def at(sha: str, result: CellResult, run_id: int) -> Measurement:
        return Measurement(sha, "2026-12-01T00:00:00Z", run_id, "sweep", result)

    passed = CellResult(CELL, Status.PASSED)
    return Baseline(segments=segments, cells={CELL: (at(commits[-1], failed, 11), at(commits[0], passed, 10))})


class Runner:
    """Runs the cell as the checkout's `cell.txt` says, counting the runs at each commit."""

    def __init__(self, repo: Path):
        self.repo = repo
        self.runs: Counter[str] = Counter()

    def __call__(self, folder: Path, cells, junit_path: Path, seconds: float) -> bool:
        commit = git(folder, "rev-parse", "HEAD")
        self.runs[commit] += 1
        verdict = (folder / "cell.txt").read_text(encoding="utf-8").split()
        passes = verdict == ["pass"] or (verdict[0] == "fail-but-try" and self.runs[commit] == int(verdict[1]))
        case = Case(cells[0].id, "passed") if passes else Case(cells[0].id, "failed", "data-dependent", stage="export")
        junit_path.write_text(junit([case], sha=commit), encoding="utf-8")
        return True


def run(tmp_path: Path, repo: Path, commits: list[str], *, repeats: int = 3, install: bool = False):
    (tmp_path / "baseline.json").write_text(dumps(state(commits)), encoding="utf-8")
    pip = tmp_path / "pip.py"
    pip.write_text(PIP, encoding="utf-8")
    given = BisectInputs(
        repo,
        tmp_path / "baseline.json",
        SKIPLISTS,
        tmp_path / "out.json",
        tmp_path / "work",
        run_id=77,
        repeats=repeats,
        install=(sys.executable, str(pip), str(tmp_path / "pip.log")) if install else (),
    )
    runner = Runner(repo)
    outcome = bisect(given, runner=runner)
    after = loads((tmp_path / "out.json").read_text(encoding="utf-8"), where="out.json")
    [found] = regressions(after, lambda cell: False)
    return outcome, runner.runs, found, unsettled(found, after.cells[CELL])


def test_a_confirmed_culprit_fails_every_time_and_its_parent_passes_every_time(tmp_path):
    commits = make_history(tmp_path / "repo", ["pass", "pass", "pass", "fail", "fail", "fail"])
    outcome, runs, found, doubt = run(tmp_path, tmp_path / "repo", commits)
    assert f"culprit {commits[3][:12]}: 1 cells" in outcome.lines and doubt is None
    assert found.culprit == commits[3] and found.good.commit == commits[2]
    # Both ends 3 times, two steps (the middle, then below it), the culprit and its parent 3 more times.
    assert runs == {commits[0]: 3, commits[5]: 3, commits[3]: 4, commits[2]: 4}
    assert outcome.lines[0] == "bisect: 2 steps, 4 checks"


def test_a_last_pass_that_fails_when_re_run_is_flaky_and_nothing_is_bisected(tmp_path):
    commits = make_history(tmp_path / "repo", ["fail-but-try 1", "pass", "fail", "fail"])
    outcome, runs, found, doubt = run(tmp_path, tmp_path / "repo", commits)
    assert doubt is not None and (doubt.kind, doubt.where, doubt.commit) == (FLAKY, "last pass", commits[0])
    assert found.culprit is None and found.good.commit == commits[0]  # the range stays as main recorded it
    assert runs == {commits[0]: 2, commits[3]: 3}  # stopped at the first failure; no step
    assert f"flaky: 1 cells: the last pass {commits[0][:12]} failed when re-run; no culprit" in outcome.lines


def test_a_first_failure_that_passes_on_the_kth_try_is_not_reproducible(tmp_path):
    commits = make_history(tmp_path / "repo", ["pass", "pass", "fail", "fail-but-try 3"])
    outcome, runs, found, doubt = run(tmp_path, tmp_path / "repo", commits, repeats=4)
    assert doubt is not None and (doubt.kind, doubt.commit, doubt.verb) == (NOT_REPRODUCIBLE, commits[3], "passed")
    assert runs[commits[3]] == 3 and outcome.steps == 0 and found.culprit is None
    assert outcome.unsettled == 1


def test_a_break_that_does_not_reproduce_at_all_names_no_culprit(tmp_path):
    commits = make_history(tmp_path / "repo", ["pass", "pass", "pass"])
    outcome, runs, found, doubt = run(tmp_path, tmp_path / "repo", commits)
    assert doubt is not None and doubt.kind == NOT_REPRODUCIBLE and found.culprit is None
    assert runs == {commits[0]: 3, commits[2]: 1} and outcome.steps == 0


def test_a_culprit_that_passes_when_re_run_is_flaky_not_a_culprit(tmp_path):
    commits = make_history(tmp_path / "repo", ["pass", "pass", "pass", "fail-but-try 2", "fail", "fail"])
    outcome, runs, found, doubt = run(tmp_path, tmp_path / "repo", commits)
    assert doubt is not None and (doubt.kind, doubt.where, doubt.commit) == (FLAKY, "candidate", commits[3])
    assert found.culprit is None and not any(line.startswith("culprit") for line in outcome.lines)
    assert runs[commits[3]] == 2  # the step failed, the first re-run passed: settled


def test_each_commit_is_installed_with_no_deps_only_while_its_pins_are_those_installed(tmp_path):
    commits = make_history(tmp_path / "repo", ["pass", "pass", "pass", "fail", "fail", "fail"], pins_change_at=3)
    outcome, _, found, _ = run(tmp_path, tmp_path / "repo", commits, install=True)
    assert found.culprit == commits[3]
    installs = (tmp_path / "pip.log").read_text(encoding="utf-8").splitlines()
    # Nothing installed yet, then the other pins, the same, then the pins before the change, the same.
    # (checks: the ends, then the culprit and its parent; steps: the middle, then below it)
    assert installs == ["check", "check", "step --no-deps", "step", "check", "check"]


def test_a_commit_that_cannot_be_installed_gives_no_result_and_the_next_install_is_full(tmp_path):
    repo = tmp_path / "repo"
    commits = make_history(repo, ["pass", "pass", "fail", "fail"])
    write(repo / "unbuildable", "setup.py that fails\n")  # the last commit (the first failure) cannot be built
    commits[-1] = commit_all(repo, "unbuildable")
    outcome, runs, _, doubt = run(tmp_path, repo, commits, install=True)
    assert commits[-1] not in runs and doubt is None
    installs = (tmp_path / "pip.log").read_text(encoding="utf-8").splitlines()
    # The failed install had c0's pins, but what it left installed is unknown: the next one is full.
    assert installs[:3] == ["check", "check --no-deps", "step"]


@pytest.mark.parametrize("before", [None, "other"])
def test_the_install_is_full_unless_the_packaging_files_are_those_installed(before):
    pins = pins_of({"setup.py": b"_deps = ['torch>=2.13']", "pyproject.toml": None})
    assert install_args(pins, before) == ()
    assert install_args(pins, pins) == ("--no-deps",)
    moved = pins_of({"setup.py": b"_deps = ['torch>=2.12']", "pyproject.toml": None})
    assert moved != pins and pins_of({"setup.py": b"", "pyproject.toml": None}) != pins_of({"pyproject.toml": b""})
