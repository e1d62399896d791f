"""The baseline jobs (docs/baseline.md): fold a run into main's state, show the state, say whether a full sweep is due.

One concept, four stages, four `baseline.py`: results (the state and how it is read), publish (its
artifacts on GitHub), jobs (the merge, show and due jobs) and cli (their options). This is the jobs'.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bot.errors import BotError
from bot.files import append_text, check_inputs, write_files
from bot.results import ResultSet, read_results
from bot.results.baseline import Segment, at, chain, flips, fold, measured, regressions, sweep_due, utc
from bot.results.baseline_json import dumps, read_state
from bot.settings import Settings
from bot.skiplist.model import load_skiplists

_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class MeasuredRun:
    """What `baseline merge` says about the run whose results it folds in (all None: only states are folded)."""

    commit: str | None = None
    parent: str | None = None
    commits: tuple[str, ...] = ()
    source: str = "push"
    run_id: int = 0
    time: str | None = None
    full: bool = False
    due: tuple[str, ...] = ()


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sha(value: str, option: str) -> str:
    if not _SHA.fullmatch(value):
        raise BotError(f"{option} {value!r}: expected a commit SHA of 40 lowercase hex digits")
    return value


def _when(text: str, option: str) -> str:
    try:
        return utc(text)
    except ValueError:
        raise BotError(f"{option} {text!r}: expected an ISO 8601 time such as 2026-12-02T07:14:10Z") from None


def _checked(run: MeasuredRun, has_junit: bool) -> MeasuredRun:
    """The run's options checked together; each problem is one line naming the option."""
    if run.commit is None:
        given = [
            name for name, on in (("--junit", has_junit), ("--parent", run.parent), ("--commits", run.commits)) if on
        ]
        given += [name for name, on in (("--full", run.full), ("--due", run.due)) if on]
        if given:
            raise BotError(f"{given[0]} needs --commit, the main commit the run measured")
        return run
    _sha(run.commit, "--commit")
    if run.parent is not None:
        _sha(run.parent, "--parent")
    for commit in run.commits:
        _sha(commit, "--commits")
    if run.commits and run.commits[-1] != run.commit:
        raise BotError("--commits must end with --commit (the push's commits, oldest first)")
    time = _when(run.time or now(), "--time")
    return MeasuredRun(run.commit, run.parent, run.commits, run.source, run.run_id, time, run.full, run.due)


def merge_job(
    states: Sequence[Path],
    junit: Sequence[Path],
    rerun: Sequence[Path],
    run: MeasuredRun,
    *,
    out: Path,
    measurement_out: Path | None,
    settings: Settings,
) -> list[str]:
    """Fold the states with this run's measurement; write the new state (and the measurement alone) whole or not at all.

    A state path that does not exist is main's first merge (`github baseline` found none and wrote
    nothing): said in a line, and folded as nothing. Folding makes that safe: a state left out here
    is still folded by the next merge, which reads the newest three.
    """
    run = _checked(run, bool(junit))
    if measurement_out is not None and run.commit is None:
        raise BotError("--measurement needs --commit: there is no measurement to write")
    check_inputs([*states, *junit, *rerun])
    lines = [f"no baseline at {path} yet: folded as an empty state" for path in states if not path.exists()]
    parts = [read_state(path) for path in states if path.exists()]
    measurement = None
    if run.commit is not None:
        measurement, said = _measure(run, junit, rerun)
        parts.append(measurement)
        lines += said
    state = fold(*parts, keep=settings.baseline_history)
    texts = {out: dumps(state)}
    if measurement_out is not None and measurement is not None:
        texts[measurement_out] = dumps(measurement)
    write_files(texts)
    lines.append(f"{len(parts)} part(s) folded: {len(state.cells)} cells, {len(state.runs)} runs → {out}")
    return lines


def _measure(run: MeasuredRun, junit: Sequence[Path], rerun: Sequence[Path]):
    """This run's results as a measurement (a push or sweep records its segment, a bisect step none), and what to say."""
    results = read_results(list(junit)) if junit else ResultSet()
    again = read_results(list(rerun)) if rerun else None
    segment = None if run.source == "bisect" else Segment(run.parent, run.commits or (run.commit,), run.run_id)
    measurement = measured(
        results,
        commit=run.commit,
        time=run.time,
        run_id=run.run_id,
        source=run.source,
        segment=segment,
        rerun=again,
        full=run.full,
        due=run.due,
    )
    lines = [f"{len(measurement.cells)} cells measured at main@{run.commit[:7]} ({run.source}, run {run.run_id})"]
    if results.problems:
        count = len(results.problems)
        lines.append(f"{count} problem(s) reading the JUnit: the cells read are folded in, the rest are not")
    return measurement, lines


def show_job(state_path: Path, skiplists_dir: Path, settings: Settings, *, when: str, as_json: bool) -> list[str]:
    """The state in figures: chain, cells, old cells, flaky cells, regressions and whether a sweep is due."""
    when = _when(when, "--now")
    state = read_state(state_path)
    skiplists = load_skiplists(skiplists_dir)
    order = chain(state)
    _, age = at(state, None, now=when, stale_days=settings.stale_days)
    flaky = flips(state, settings.flaky_window)
    broken = regressions(state, skiplists.skipped)
    due = sweep_due(state, now=when, every_days=settings.sweep_every_days)
    document = {
        "chain": len(order),
        "newest": order[-1] if order else None,
        "cells": len(state.cells),
        "runs": len(state.runs),
        "old_cells": age.old_cells,
        "flaky": {cell.id: count for cell, count in sorted(flaky.items())},
        "regressions": [
            {
                "cell": r.cell.id,
                "good": r.good.commit,
                "bad": r.bad.commit,
                "culprit": r.culprit,
                "candidates": list(r.candidates),
            }
            for r in broken
        ],
        "sweep_due": list(due),
    }
    if as_json:
        return [json.dumps(document, indent=1)]
    return _show_lines(document, settings)


def _show_lines(document: dict, settings: Settings) -> list[str]:
    newest = f", newest main@{document['newest'][:7]}" if document["newest"] else ""
    lines = [
        f"baseline: {document['cells']} cells, a chain of {document['chain']} commits{newest}, {document['runs']} runs folded",
        f"old cells (older than {settings.stale_days:g} days): {document['old_cells']}",
        f"flaky cells (flipped within their last {settings.flaky_window} results): {len(document['flaky'])}",
    ]
    lines += [f"  {cell}: {count} flip(s)" for cell, count in document["flaky"].items()]
    lines.append(f"regressions: {len(document['regressions'])}")
    for r in document["regressions"]:
        who = f"culprit main@{r['culprit'][:7]}" if r["culprit"] else f"{len(r['candidates'])} candidate commit(s)"
        lines.append(f"  {r['cell']}: passed at main@{r['good'][:7]}, failing since main@{r['bad'][:7]}; {who}")
    due = document["sweep_due"]
    lines.append(f"full sweep due: {'; '.join(due)}" if due else "full sweep due: no")
    return lines


def due_job(state_path: Path, settings: Settings, *, when: str, github_output: Path | None) -> list[str]:
    """The reasons a full sweep is due (none: not due); `sweep=true|false` for the workflow."""
    when = _when(when, "--now")
    if not state_path.exists():
        # `github baseline` found none (found=false) and wrote nothing: the first sweep is due.
        reasons: tuple[str, ...] = (f"no baseline yet (nothing at {state_path})",)
    else:
        reasons = sweep_due(read_state(state_path), now=when, every_days=settings.sweep_every_days)
    if github_output is not None:
        append_text(github_output, f"sweep={'true' if reasons else 'false'}\n")
    return [f"full sweep due: {reason}" for reason in reasons] or ["no full sweep due"]
