"""The bisect job: run main's broken cells at commits between their last pass and first failure, fold each step into the state."""

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
from bot.errors import BotError
from bot.files import make_parent, read_text, write_text
from bot.jobs import bisect_plan
from bot.results.baseline import fold, measured, regressions
from bot.results.baseline_json import dumps, loads
from bot.results.merge import read_results
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


@dataclass(frozen=True)
class BisectOutcome:
    steps: int
    lines: tuple[str, ...]
    found: int  # ranges whose culprit is now known
    left: int  # ranges still open (out of budget) or undecided


@dataclass
class _Session:
    """The state as the steps fold into it, and which (commit, cell) pairs have run."""

    baseline: object
    tried: set = field(default_factory=set)
    steps: int = 0


def bisect(given: BisectInputs, *, clock: Callable[[], float] = time.monotonic) -> BisectOutcome:
    """Run steps until every range has its culprit, is undecided, or the budget is spent; write the state once."""
    _check(given)
    # Absolute: git runs in --repo (`-C`) and the step in the checkout, and a relative `-w…` would
    # otherwise resolve against each differently, or read as an option.
    given = replace(given, work=given.work.resolve())
    given.work.mkdir(parents=True, exist_ok=True)
    skiplists = load_skiplists(given.skiplists).skipped  # listed cells are no regression: the skip accepts the break
    session = _Session(loads(read_text(given.state), where=str(given.state)))
    deadline = clock() + given.max_minutes * 60
    pending = frozenset(r.cell for r in regressions(session.baseline, skiplists) if r.culprit is None)
    while True:
        spans = bisect_plan.ranges(regressions(session.baseline, skiplists), pending)
        decided = bisect_plan.plan(
            spans,
            frozenset(session.tried),
            steps_left=given.max_steps - session.steps,
            seconds_left=deadline - clock(),
        )
        if decided.step is None:
            break
        _run_step(given, session, decided.step, deadline - clock())
    # Written once, whole: a bisect cut off halfway leaves the state it was given.
    write_text(given.out, dumps(session.baseline))
    lines = (f"bisect: {session.steps} steps", *bisect_plan.describe(decided))
    return BisectOutcome(session.steps, lines, len(decided.found), len(decided.stuck) + len(decided.left))


def _check(given: BisectInputs) -> None:
    if given.max_steps < 0 or given.max_minutes < 0:
        raise BotError("--max-steps and --max-minutes must be 0 or more")
    if not given.repo.is_dir() or not _git(given.repo, "rev-parse", "--git-dir", quiet=True):
        raise BotError(f"--repo {given.repo}: not a git checkout; pass a clone of the repository with main's history")

    make_parent(given.out)  # an --out that cannot be written is said now, not after an hour of steps


def _run_step(given: BisectInputs, session: _Session, step: bisect_plan.Step, seconds: float) -> None:
    """Check the commit out in its own worktree, run the cells there, fold what they gave into the state."""
    session.steps += 1
    session.tried.update((step.commit, cell) for cell in step.cells)
    if not _SHA.fullmatch(step.commit):  # the state's reader checks every SHA: this is the last guard before git
        log.warning("bisect step %d: %r is not a commit SHA: no result", session.steps, step.commit[:60])
        return
    folder = given.work / f"step-{session.steps}-{step.commit[:12]}"
    junit = given.work / f"step-{session.steps}.xml"
    started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    log.warning("bisect step %d: %d cells at %s", session.steps, len(step.cells), step.commit[:12])
    shutil.rmtree(folder, ignore_errors=True)  # left by an earlier bisect given the same --work
    _git(given.repo, "worktree", "prune")
    added = _git(given.repo, "worktree", "add", "--detach", "--force", "--end-of-options", str(folder), step.commit)
    try:
        ran = added and _run_cells(folder, step, junit, given.run_args, seconds)
    finally:
        if added:
            _git(given.repo, "worktree", "remove", "--force", "--end-of-options", str(folder))
    if not ran:
        return
    results = read_results([junit])
    if not results.complete:
        log.warning("bisect step %d: unreadable JUnit (%s): no result", session.steps, results.problems[0])
        return
    wanted = set(step.cells)
    results = results.restricted_to(wanted)
    part = measured(results, commit=step.commit, time=started, run_id=given.run_id, source="bisect", segment=None)
    session.baseline = fold(session.baseline, part, keep=given.keep)


def _run_cells(folder: Path, step: bisect_plan.Step, junit: Path, run_args: tuple[str, ...], seconds: float) -> bool:
    """`export-bot run --cells … --probe` in the checkout, its transformers first on the path; False: no JUnit."""
    # `--opt=value`: a value never reads as an option, whatever it starts with.
    command = [sys.executable, "-m", "bot", "run", f"--cells={','.join(c.id for c in step.cells)}", "--probe"]
    command += [f"--junit={junit.resolve()}", *run_args]
    # The checkout's own transformers (its src/), then this bot, whatever the runner has installed.
    paths = [str(folder.resolve() / "src"), str(Path(bot.__file__).resolve().parents[1])]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    junit.unlink(missing_ok=True)
    try:
        done = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, text=True, timeout=max(seconds, 0) + STEP_SLACK
        )
    except subprocess.TimeoutExpired:
        log.warning("bisect: the run at %s took too long and was stopped: no result", step.commit[:12])
        return False
    if done.returncode != 0 or not junit.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        log.warning("bisect: the run at %s failed (exit %d): %s", step.commit[:12], done.returncode, tail[0][:300])
        return False
    return True


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
