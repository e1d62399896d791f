"""The bisect job: confirm main's breaks at both ends, run the broken cells at the commits between, confirm the culprit."""

from __future__ import annotations

import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import bot
from bot.cells import Cell
from bot.errors import BotError
from bot.files import make_parent, read_text, write_text
from bot.jobs import bisect_plan
from bot.results.baseline import Baseline, Measurement, fold, outcome, regressions, slim, utc
from bot.results.baseline_json import dumps, loads
from bot.results.bisected import unsettled
from bot.results.merge import read_results
from bot.results.model import ResultSet
from bot.skiplist.model import load_skiplists

log = logging.getLogger(__name__)
_SHA = re.compile(r"[0-9a-f]{40}")
STEP_SLACK = 60.0  # seconds a step may need beyond its cells (imports, the checkout) before it is cut


@dataclass(frozen=True)
class BisectInputs:
    repo: Path  # a clone of the repository holding every commit of main's chain
    state: Path
    skiplists: Path
    out: Path
    work: Path  # where each step's worktree and JUnit go
    max_steps: int = 8
    max_minutes: float = 60.0
    run_args: tuple[str, ...] = ()  # appended to `export-bot run` (`--source …`, `--backends …`, `-n 0`)
    run_id: int = 0
    keep: int = 10
    # Runs at each end of a range before it is bisected, and at its culprit and the culprit's parent
    # (0: trust the state, confirm nothing). upstream's utils/check_bad_commit.py runs a test 4 times.
    repeats: int = 4
    install: tuple[str, ...] = ()  # `pip install` in the runner's Python, per commit (empty: its src/ on PYTHONPATH)


@dataclass(frozen=True)
class BisectOutcome:
    steps: int
    lines: tuple[str, ...]
    found: int  # ranges whose culprit is now known
    left: int  # ranges still open (out of budget) or undecided
    unsettled: int = 0  # cells whose break a re-run did not confirm: flaky or not reproducible


# Runs the cells in a checkout, writing JUnit: (checkout, cells, junit, seconds) → whether it wrote it.
Runner = Callable[[Path, tuple[Cell, ...], Path, float], bool]


@dataclass
class _Session:
    """The state as the steps fold into it, which (commit, cell) pairs have run, and what is installed."""

    baseline: object
    left: Callable[[], float]  # seconds of the budget left
    tried: set = field(default_factory=set)
    checked: set = field(default_factory=set)  # (commit, cell) pairs re-run `repeats` times
    steps: int = 0
    checks: int = 0  # checkouts that re-ran cells to confirm an end or a culprit
    installed: str | None = None  # the packaging fingerprint last installed; None: unknown, install fully


def bisect(
    given: BisectInputs, *, clock: Callable[[], float] = time.monotonic, runner: Runner | None = None
) -> BisectOutcome:
    """Confirm each range's ends, run steps until every range has its culprit (confirmed), is undecided,
    unsettled, or the budget is spent; write the state once."""
    _check(given)
    # Absolute: git runs in --repo (`-C`) and the step in the checkout, and a relative `-w…` would
    # otherwise resolve against each differently, or read as an option.
    given = replace(given, work=given.work.resolve())
    given.work.mkdir(parents=True, exist_ok=True)
    skipped = load_skiplists(given.skiplists).skipped  # listed cells are no regression: the skip accepts the break
    deadline = clock() + given.max_minutes * 60
    session = _Session(loads(read_text(given.state), where=str(given.state)), lambda: deadline - clock())
    run = runner or _runner(given)
    # A break re-runs already disputed is left alone until main's results move its ends.
    found = [r for r in _settled(session.baseline, skipped) if r.culprit is None]
    pending = frozenset(r.cell for r in found)
    ends: dict[tuple[str, bool], list[Cell]] = {}
    for r in found:  # the last pass must pass and the first failure fail, every time, before any step
        ends.setdefault((r.good.commit, True), []).append(r.cell)
        ends.setdefault((r.bad.commit, False), []).append(r.cell)
    for (commit, expect), cells in ends.items():
        _check_at(given, session, commit, tuple(cells), expect, run)
    while True:
        spans = bisect_plan.ranges(_settled(session.baseline, skipped), pending)
        decided = bisect_plan.plan(
            spans, frozenset(session.tried), steps_left=given.max_steps - session.steps, seconds_left=session.left()
        )
        if decided.step is not None:
            _run_step(given, session, decided.step, run)
        elif not _confirm_culprits(given, session, decided.found, run):
            break
    # Written once, whole: a bisect cut off halfway leaves the state it was given.
    write_text(given.out, dumps(session.baseline))
    doubts = _unsettled_lines(session.baseline, skipped, pending)
    lines = (f"bisect: {session.steps} steps, {session.checks} checks", *bisect_plan.describe(decided), *doubts)
    left = len(decided.stuck) + len(decided.left)
    return BisectOutcome(session.steps, lines, len(decided.found), left, len(doubts))


def _check(given: BisectInputs) -> None:
    if given.max_steps < 0 or given.max_minutes < 0 or given.repeats < 0:
        raise BotError("--max-steps, --max-minutes and --repeats must be 0 or more")
    if not given.repo.is_dir() or not _git(given.repo, "rev-parse", "--git-dir", quiet=True):
        raise BotError(f"--repo {given.repo}: not a git checkout; pass a clone of the repository with main's history")

    make_parent(given.out)  # an --out that cannot be written is said now, not after an hour of steps


def _settled(baseline, skipped) -> list:
    """The regressions no re-run disputed: the ones a bisect may narrow and name a culprit for."""
    return [r for r in regressions(baseline, skipped) if unsettled(r, baseline.cells[r.cell]) is None]


def _confirm_culprits(given: BisectInputs, session: _Session, found, run: Runner) -> bool:
    """Re-run each culprit found (it must fail every time) and its parent (it must pass every time).

    True when a check ran: the state changed (a disagreement turns the range unsettled), so the plan
    is made again. A range a push or an earlier bisect already confirmed is not re-run.
    """
    ran = False
    for span in found:
        ran |= _check_at(given, session, span.candidates[0], span.cells, False, run)
        ran |= _check_at(given, session, span.good, span.cells, True, run)
    return ran


def _check_at(given: BisectInputs, session: _Session, commit: str, cells, expect: bool, run: Runner) -> bool:
    """Run `cells` at `commit` `repeats` times and fold one measurement each: a flip if a run gave not `expect`."""
    todo = tuple(c for c in cells if (commit, c) not in session.checked)
    if not todo or given.repeats == 0 or session.left() <= 0:
        return False
    session.checks += 1
    session.checked.update((commit, c) for c in todo)
    name = f"check-{session.checks}"
    log.warning(
        "bisect %s: %d cells at %s, %d runs, expected to %s",
        name,
        len(todo),
        commit[:12],
        given.repeats,
        "pass" if expect else "fail",
    )
    started = _now()
    runs = _at_commit(given, session, name, commit, todo, given.repeats, expect, run)
    session.baseline = fold(session.baseline, _measured(runs, expect, commit, started, given.run_id), keep=given.keep)
    return True


def _run_step(given: BisectInputs, session: _Session, step: bisect_plan.Step, run: Runner) -> None:
    """Check the commit out in its own worktree, run the cells there once, fold what they gave into the state."""
    session.steps += 1
    session.tried.update((step.commit, cell) for cell in step.cells)
    log.warning("bisect step %d: %d cells at %s", session.steps, len(step.cells), step.commit[:12])
    started = _now()
    runs = _at_commit(given, session, f"step-{session.steps}", step.commit, step.cells, 1, None, run)
    session.baseline = fold(
        session.baseline, _measured(runs, None, step.commit, started, given.run_id), keep=given.keep
    )


def _at_commit(given, session, name: str, commit: str, cells, times: int, expect, run: Runner) -> list[ResultSet]:
    """The cells' results at `commit`, one ResultSet per run that gave readable JUnit, at most `times`.

    The runs stop early once every cell has disagreed with `expect` (one disagreement settles it, as
    upstream's check stops at the first failure of the last pass).
    """
    if not _SHA.fullmatch(commit):  # the state's reader checks every SHA: this is the last guard before git
        log.warning("bisect %s: %r is not a commit SHA: no result", name, commit[:60])
        return []
    folder = given.work / f"{name}-{commit[:12]}"
    shutil.rmtree(folder, ignore_errors=True)  # left by an earlier bisect given the same --work
    _git(given.repo, "worktree", "prune")
    if not _git(given.repo, "worktree", "add", "--detach", "--force", "--end-of-options", str(folder), commit):
        return []
    runs: list[ResultSet] = []
    try:
        if not _install(given, session, folder):
            return []
        for attempt in range(1, times + 1):
            junit = given.work / f"{name}-{attempt}.xml"
            junit.unlink(missing_ok=True)
            if not run(folder, tuple(cells), junit, session.left()):
                break
            results = read_results([junit])
            if not results.complete:
                log.warning("bisect %s: unreadable JUnit (%s): no result", name, results.problems[0])
                break
            runs.append(results.restricted_to(set(cells)))
            if expect is not None and all(_disagrees(runs, cell, expect) for cell in cells):
                break
    finally:
        _git(given.repo, "worktree", "remove", "--force", "--end-of-options", str(folder))
    return runs


def _disagrees(runs: list[ResultSet], cell: Cell, expect: bool) -> bool:
    return any(outcome(r.results[cell]) is (not expect) for r in runs if cell in r.results)


def _measured(runs: list[ResultSet], expect: bool | None, commit: str, time_: str, run_id: int):
    """One measurement per cell from its runs at `commit`: with `expect`, a flip when any run said otherwise.

    The flip keeps the run that disagreed (its failure message, or its pass), says neither pass nor
    fail (`said`), and so leaves the range as main recorded it; bot/results/bisected.py reads it back.
    """
    cells = {}
    for cell in sorted({cell for r in runs for cell in r.results}):
        got = [r.results[cell] for r in runs if cell in r.results]
        spoke = [g for g in got if outcome(g) is not None]  # a crash or a skip says nothing
        against = [g for g in spoke if expect is not None and outcome(g) is not expect]
        pick = (against or spoke or got)[0]
        cells[cell] = (Measurement(commit, utc(time_), run_id, "bisect", slim(pick), bool(against)),)
    return Baseline(cells=cells, runs=frozenset({run_id}) if run_id and cells else frozenset())


def _install(given: BisectInputs, session: _Session, folder: Path) -> bool:
    """`pip install -e` the checkout (with `--no-deps` when its packaging is the one installed last)."""
    if not given.install:
        return True
    pins = bisect_plan.pins_of({name: _read_bytes(folder / name) for name in bisect_plan.PACKAGING})
    command = [*given.install, *bisect_plan.install_args(pins, session.installed), "-e", str(folder)]
    session.installed = None  # until it succeeds, what is installed is unknown
    try:
        done = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, timeout=max(session.left(), 0) + STEP_SLACK
        )
    except subprocess.TimeoutExpired:
        log.warning("bisect: installing %s took too long and was stopped: no result", folder.name)
        return False
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        log.warning("bisect: installing %s failed (exit %d): %s", folder.name, done.returncode, tail[0][:300])
        return False
    session.installed = pins
    return True


def _read_bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _runner(given: BisectInputs) -> Runner:
    """`export-bot run --cells … --probe` in the checkout: the commit's transformers, then this bot."""

    def run(folder: Path, cells: tuple[Cell, ...], junit: Path, seconds: float) -> bool:
        # `--opt=value`: a value never reads as an option, whatever it starts with.
        command = [sys.executable, "-m", "bot", "run", f"--cells={','.join(c.id for c in cells)}", "--probe"]
        command += [f"--junit={junit.resolve()}", *given.run_args]
        # Installed, the commit's transformers is the one pip put in place; else its src/ comes first.
        paths = [] if given.install else [str(folder.resolve() / "src")]
        paths.append(str(Path(bot.__file__).resolve().parents[1]))
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        )
        try:
            done = subprocess.run(
                command, cwd=folder, env=env, capture_output=True, text=True, timeout=max(seconds, 0) + STEP_SLACK
            )
        except subprocess.TimeoutExpired:
            log.warning("bisect: the run at %s took too long and was stopped: no result", folder.name)
            return False
        if done.returncode != 0 or not junit.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            log.warning("bisect: the run at %s failed (exit %d): %s", folder.name, done.returncode, tail[0][:300])
            return False
        return True

    return run


def _unsettled_lines(baseline, skipped, pending: frozenset[Cell]) -> list[str]:
    """One line per disputed break: where the re-runs disagreed, and that no culprit is named."""
    grouped: dict[tuple[str, str, str, str], int] = {}
    for r in regressions(baseline, skipped):
        doubt = unsettled(r, baseline.cells[r.cell]) if r.cell in pending else None
        if doubt is not None:
            key = (doubt.kind, doubt.where, doubt.commit, doubt.verb)
            grouped[key] = grouped.get(key, 0) + 1
    return [
        f"{kind}: {count} cells: the {where} {commit[:12]} {verb} when re-run; no culprit"
        for (kind, where, commit, verb), count in sorted(grouped.items())
    ]


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _git(repo: Path, *args: str, quiet: bool = False) -> bool:
    """Run git in `repo`; a failure is logged and False (a commit that cannot be checked out gives no result)."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0 and not quiet:
        log.warning(
            "git %s in %s failed: %s (a commit missing from a shallow clone? fetch with fetch-depth: 0)",
            " ".join(args[:2]),
            repo,
            done.stderr.strip()[:300],
        )
    return done.returncode == 0


def split_run_args(text: str) -> tuple[str, ...]:
    """`--run-args "…"` as the shell would split it; unbalanced quotes are a usage error."""
    try:
        return tuple(shlex.split(text))
    except ValueError as exc:
        raise BotError(f"--run-args {text!r}: {exc}; quote it as a shell would") from None
