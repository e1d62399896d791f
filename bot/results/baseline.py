"""Main's baseline (docs/baseline.md): per cell, its recent results on main, each with the commit it was measured at.

One concept, four stages, four `baseline.py`: results (the state and how it is read), publish (its
artifacts on GitHub), jobs (the merge, show and due jobs) and cli (their options). This is the results stage's.

Every run on main (a push's selected cells, the full sweep, a bisect step) adds `Measurement`s;
`fold` unions states and measurements in any order to the same state, so concurrent runs and
merge jobs GitHub cancelled while pending lose nothing: the next merge folds in what they left.
A PR is judged against each cell's newest result at or before its merge base (`at`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

from bot import footprints
from bot.cells import Cell
from bot.outcomes import (
    ARTIFACT_BYTES,
    DELEGATED_NODES,
    EXPORT_SECONDS,
    MAX_ABS_ERROR,
    MAX_REL_ERROR,
    MISMATCH_FRACTION,
    TEST_SECONDS,
    TOLERANCE_RATIO,
    CellResult,
)
from bot.results.model import ResultSet, SuiteInfo
from bot.setup_problems import MODULE

log = logging.getLogger(__name__)

FORMAT = "export-bot-baseline"
VERSION = 3  # 3: footprints; version 2 is read as a state without them
SOURCES = ("push", "sweep", "bisect")
MESSAGE_LIMIT = 500  # a measurement keeps the first characters of its message, never the traceback
FULL_SWEEPS_KEPT = 20
# The testcase properties a measurement keeps: what the diff reads of a base result, and the figures
# of its value comparison (docs/rules.md), so each cell's history says how well it passed, not only whether.
FIGURES = (MAX_ABS_ERROR, MAX_REL_ERROR, MISMATCH_FRACTION, TOLERANCE_RATIO)
FIGURES += (EXPORT_SECONDS, TEST_SECONDS, ARTIFACT_BYTES, DELEGATED_NODES)  # what drift compares besides
KEPT_PROPERTIES = ("compared", MODULE, *FIGURES)


@dataclass(frozen=True)
class Measurement:
    """One result of one cell on main."""

    commit: str  # the main commit the cell ran at
    time: str  # ISO 8601 UTC, when the run that measured it started
    run_id: int  # the workflow run (0 outside GitHub)
    source: str  # one of SOURCES
    result: CellResult  # status, stage, kind, message (cut to 500 characters), skip scope, probe, duration
    flipped: bool = False  # its confirming re-run on main disagreed with it


@dataclass(frozen=True)
class Footprint:
    """The checkout's functions one cell executed, recorded by one run on main (docs/selection.md, "Footprints")."""

    commit: str
    time: str
    run_id: int
    source: str
    functions: frozenset[str]  # `PATH::QUALNAME` (bot/footprints.py)


@dataclass(frozen=True)
class Segment:
    """Commits one push added to main, oldest first, and the commit they were pushed onto."""

    parent: str | None  # the push event's `before` (None: unknown, e.g. a sweep of a commit no push reported)
    commits: tuple[str, ...]  # the last one is the push event's `after`
    run_id: int = 0


@dataclass(frozen=True)
class Baseline:
    segments: tuple[Segment, ...] = ()
    cells: Mapping[Cell, tuple[Measurement, ...]] = field(default_factory=dict)  # newest first, at most `keep`
    full_sweeps: tuple[tuple[str, str], ...] = ()  # (commit, time) of the full sweeps kept, newest first
    # (commit, reason): why a full sweep is due, and the push that said so ("shared: src/…/modeling_utils.py")
    due: tuple[tuple[str, str], ...] = ()
    runs: frozenset[int] = frozenset()  # the runs folded in (a measurement run is folded once)
    # Each cell's newest recorded footprint: a run that records none leaves the one before in place.
    footprints: Mapping[Cell, Footprint] = field(default_factory=dict)


@dataclass(frozen=True)
class Age:
    """How old the base a PR is judged against is, for the comment's one line."""

    newest: str | None  # the newest commit among the base results used
    behind: int | None  # commits between it and the merge base (None: a commit not in the chain)
    old_cells: int  # base results older than `stale-days`
    merge_base_known: bool  # False: the merge base is not in the chain; main's newest results were used


@dataclass(frozen=True)
class Regression:
    """A cell failing on main that passed before: the last good and first bad results, and who broke it."""

    cell: Cell
    good: Measurement  # the newest passing measurement
    bad: Measurement  # the oldest failing measurement newer than `good`
    culprit: str | None  # the commit that broke it, when the history says so without a bisect
    candidates: tuple[str, ...]  # chain commits after good.commit up to and including bad.commit


# --- main's commits in order ------------------------------------------------------------------


def chain(baseline: Baseline) -> tuple[str, ...]:
    """Main's commits oldest → newest, linked from the segments (docs/baseline.md, "The chain").

    From the newest segment's last commit, each commit's predecessor (the commit before it in its
    push, or the push's `before`) leads back. Where no segment names a predecessor (a gap: a push
    whose run never merged, or the start of history), the walk goes on from the newest segment
    pushed before the one it was in. Commits a force-push replaced are never reached.
    """
    segments = sorted(set(baseline.segments), key=_segment_key)  # oldest first
    before: dict[str, str] = {}
    introduced: dict[str, int] = {}  # commit → index of the oldest segment that holds it
    for index, segment in enumerate(segments):
        previous = segment.parent
        for commit in segment.commits:
            if previous is not None and previous != commit:
                before.setdefault(commit, previous)
            introduced.setdefault(commit, index)
            previous = commit
    newest_first: list[str] = []
    seen: set[str] = set()

    def start(below: int) -> int:
        """The newest segment before `below` whose last commit it was the first to hold (a later sweep of
        an older commit is no tip), and that the walk has not reached; -1 when none is left."""
        fresh = (i for i in range(below - 1, -1, -1) if introduced[segments[i].commits[-1]] == i)
        return next((i for i in fresh if segments[i].commits[-1] not in seen), -1)

    index = start(len(segments))
    while index >= 0:
        commit: str | None = segments[index].commits[-1]
        bound = index
        while commit is not None and commit not in seen:
            seen.add(commit)
            newest_first.append(commit)
            bound = introduced.get(commit, bound)
            commit = before.get(commit)
        index = start(bound)
    return tuple(reversed(newest_first))


def _segment_key(segment: Segment) -> tuple:
    return (segment.run_id, segment.commits, segment.parent or "")


def ranks(baseline: Baseline) -> dict[str, int]:
    """Each chain commit's position, oldest 0; a commit off the chain ranks below all of them (-1)."""
    return {commit: index for index, commit in enumerate(chain(baseline))}


def _order(rank: Mapping[str, int]) -> Callable[[Measurement], tuple]:
    """The sort key of measurements, oldest smallest: chain position, then time, then run; a total order."""

    def key(m: Measurement) -> tuple:
        r = m.result
        return (
            rank.get(m.commit, -1),
            m.time,
            m.run_id,
            m.commit,
            m.source,
            m.flipped,
            r.status.value,
            r.stage or "",
            r.kind or "",
            r.message,
            r.skip_scope or "",
            r.exactness_scope or "",
            r.probe,
            -1.0 if r.duration is None else r.duration,
            r.components,
            r.properties,
        )

    return key


# --- folding ----------------------------------------------------------------------------------


def fold(*parts: Baseline, keep: int = 10) -> Baseline:
    """The union of states and measurements; the same whatever the order, and folding one twice changes nothing.

    Per cell, one measurement per (commit, run), newest first by the commit's place in the chain,
    at most `keep`. A due reason is dropped once a full sweep at or after its commit is in.
    """
    segments = tuple(sorted({s for part in parts for s in part.segments}, key=_segment_key))
    rank = ranks(Baseline(segments=segments))
    key = _order(rank)
    gathered: dict[Cell, dict[tuple[str, int], Measurement]] = {}
    for part in parts:
        for cell, measurements in part.cells.items():
            slot = gathered.setdefault(cell, {})
            for m in measurements:
                held = slot.get((m.commit, m.run_id))
                if held is None or key(m) > key(held):
                    slot[(m.commit, m.run_id)] = m
    cells = {cell: _kept(sorted(slot.values(), key=key, reverse=True), keep) for cell, slot in sorted(gathered.items())}
    sweeps = sorted({s for part in parts for s in part.full_sweeps}, key=lambda s: (s[1], s[0]), reverse=True)
    due = _pending({d for part in parts for d in part.due}, sweeps, rank)
    return Baseline(
        segments=segments,
        cells=cells,
        full_sweeps=tuple(sweeps[:FULL_SWEEPS_KEPT]),
        due=due,
        runs=frozenset(run for part in parts for run in part.runs),
        footprints=_newest_footprints(parts, rank),
    )


def _newest_footprints(parts: Iterable[Baseline], rank: Mapping[str, int]) -> dict[Cell, Footprint]:
    """Per cell, the footprint of the newest run that recorded one (chain place, time, run; then its content)."""

    def key(f: Footprint) -> tuple:
        return (rank.get(f.commit, -1), f.time, f.run_id, f.commit, f.source, sorted(f.functions))

    newest: dict[Cell, Footprint] = {}
    for part in parts:
        for cell, footprint in part.footprints.items():
            held = newest.get(cell)
            if held is None or key(footprint) > key(held):
                newest[cell] = footprint
    return dict(sorted(newest.items()))


def _kept(ordered: list[Measurement], keep: int) -> tuple[Measurement, ...]:
    """The newest `keep` measurements; when none of them passes, also the newest pass and the first
    failure after it (the two ends of the regression: `regressions`' good and bad).

    Without them a cell failing `keep` times in a row would lose its last pass, and with it the
    regression (the tracking issue would close saying the cell passes again), or its first failure,
    and with it the culprit a push or a bisect named (it would be bisected again every night).
    The kept set is a function of the measurements folded, whatever their order; folded in groups,
    a group whose own last pass is older may have dropped the first failure, which only widens the
    range (`bad` newer than the first failure, never a wrong culprit by the one-candidate rule).
    """
    kept = ordered[:keep]
    if any(said(m) for m in kept):
        return tuple(kept)
    last_pass = next((i for i, m in enumerate(ordered) if said(m)), None)
    if last_pass is None:
        return tuple(kept)
    first_fail = next((i for i in range(last_pass - 1, -1, -1) if said(ordered[i]) is False), None)
    ends = [i for i in (first_fail, last_pass) if i is not None and i >= keep]
    return (*kept, *(ordered[i] for i in ends))


def _pending(due: Iterable[tuple[str, str]], sweeps, rank: Mapping[str, int]) -> tuple[tuple[str, str], ...]:
    """The due reasons no full sweep has answered yet: none at the reason's commit or later on the chain."""
    swept = max((rank.get(commit, -1) for commit, _ in sweeps), default=-2)
    swept_commits = {commit for commit, _ in sweeps}
    left = [
        (commit, reason)
        for commit, reason in due
        if commit not in swept_commits and not (commit in rank and rank[commit] <= swept)
    ]
    return tuple(sorted(left, key=lambda d: (-rank.get(d[0], -1), d[0], d[1])))


# --- one run's results as a state ---------------------------------------------------------------


def outcome(result: CellResult) -> bool | None:
    """True passing, False failing; None for what says nothing about the export (a skip, a crash, a timeout)."""
    if result.status.passing:
        return True
    if result.status.failing and not result.infrastructure:
        return False
    return None


def said(m: Measurement) -> bool | None:
    """What a measurement says of the export: its outcome, or None when its confirming re-run disagreed
    (a flip: counted by `flips`, but neither a break nor a pass of main)."""
    return None if m.flipped else outcome(m.result)


def slim(result: CellResult) -> CellResult:
    """What a measurement keeps of a result: no traceback, no file, the message cut, the duration in ms, the properties the diff reads."""
    return replace(
        result,
        message=result.message[:MESSAGE_LIMIT],
        details="",
        duration=None if result.duration is None else round(result.duration, 3),  # ms: what balancing needs
        properties=tuple((k, v) for k, v in result.properties if k in KEPT_PROPERTIES),
        source="",
    )


def measured(
    results: ResultSet,
    *,
    commit: str,
    time: str,
    run_id: int,
    source: str,
    segment: Segment | None,
    rerun: ResultSet | None = None,
    full: bool = False,
    due: tuple[str, ...] = (),
) -> Baseline:
    """One run's results as a Baseline, the measurement artifact; `flipped` where the confirming re-run disagreed."""
    again = rerun.results if rerun is not None else {}
    time = utc(time)
    cells = {}
    footprints = {}
    for cell, result in sorted(results.results.items()):
        functions = _footprint_of(result)
        if functions:
            footprints[cell] = Footprint(commit, time, run_id, source, functions)
        other = again.get(cell)
        flipped = (
            other is not None and None not in (outcome(result), outcome(other)) and outcome(result) != outcome(other)
        )
        cells[cell] = (Measurement(commit, time, run_id, source, slim(result), flipped),)
    return Baseline(
        segments=(segment,) if segment else (),
        cells=cells,
        full_sweeps=((commit, time),) if full else (),
        due=tuple(sorted({(commit, reason) for reason in due})),
        runs=frozenset({run_id}) if run_id else frozenset(),
        footprints=footprints,
    )


def _footprint_of(result: CellResult) -> frozenset[str]:
    """The functions of a result's `footprint` property; none when it has none, or one the reader refuses (said)."""
    text = next((value for key, value in result.properties if key == footprints.PROPERTY), None)
    if not text:
        return frozenset()
    try:
        return footprints.decode(text)
    except footprints.FootprintError as exc:
        log.warning("%s: footprint not kept: %s", result.cell.id, exc)
        return frozenset()


# --- reading the state ------------------------------------------------------------------------


def newest(baseline: Baseline) -> ResultSet:
    """Each cell's newest result on main."""
    results = {cell: ms[0].result for cell, ms in baseline.cells.items() if ms}
    return ResultSet(results=results, suites=_suites(_newest_commit(baseline.cells.values(), ranks(baseline))))


def newest_said(baseline: Baseline) -> dict[Cell, CellResult]:
    """Each cell's newest result that passes or fails, else its newest: a crash, a timeout or a skip on main
    after a failure leaves main broken (for "failing on main too")."""
    return {
        cell: next((m.result for m in ms if said(m) is not None), ms[0].result)
        for cell, ms in baseline.cells.items()
        if ms
    }


def at(baseline: Baseline, merge_base: str | None, *, now: str, stale_days: float) -> tuple[ResultSet, Age]:
    """Per cell, its newest measurement at or before `merge_base` on the chain, and how old that base is.

    A merge base off the chain (or None) gives each cell's newest result, said in `Age.merge_base_known`.
    Measurements at commits off the chain count as older than every chain commit.
    """
    rank = ranks(baseline)
    known = merge_base is not None and merge_base in rank
    limit = rank[merge_base] if known else len(rank)
    used: dict[Cell, Measurement] = {}
    for cell, ms in baseline.cells.items():
        found = next((m for m in ms if rank.get(m.commit, -1) <= limit), None)
        if found is not None:
            used[cell] = found
    newest_commit = _newest_commit([(m,) for m in used.values()], rank)
    behind = limit - rank[newest_commit] if known and newest_commit in rank else None
    stale = to_instant(now) - timedelta(days=stale_days)
    old = sum(1 for m in used.values() if to_instant(m.time) < stale)
    results = ResultSet(results={cell: m.result for cell, m in used.items()}, suites=_suites(newest_commit))
    return results, Age(newest_commit, behind, old, known)


def _newest_commit(measurement_lists: Iterable[tuple[Measurement, ...]], rank: Mapping[str, int]) -> str | None:
    heads = [ms[0] for ms in measurement_lists if ms]
    if not heads:
        return None
    return max(heads, key=lambda m: (rank.get(m.commit, -1), m.time, m.commit)).commit


def _suites(commit: str | None) -> tuple[SuiteInfo, ...]:
    """The base's one suite: its commit, so a diff against it states main's commit as the base sha."""
    return (SuiteInfo(file="baseline.json", name="baseline", git_sha=commit),) if commit else ()


def flips(baseline: Baseline, window: int) -> dict[Cell, int]:
    """Cells that flipped on main within their last `window` measurements, with the count of flips.

    A flip is a measurement whose confirming re-run disagreed, or two adjacent measurements at the
    same commit that disagree (one passing, one failing).
    """
    found = {}
    for cell, ms in baseline.cells.items():
        recent = ms[:window]
        count = sum(m.flipped for m in recent)
        for newer, older in zip(recent, recent[1:]):
            a, b = outcome(newer.result), outcome(older.result)
            if newer.commit == older.commit and None not in (a, b) and a != b:
                count += 1
        if count:
            found[cell] = count
    return found


def regressions(baseline: Baseline, skipped: Callable[[Cell], bool]) -> tuple[Regression, ...]:
    """Cells whose newest measurement that passes or fails (a crash, a timeout or a skip does neither) fails,
    not skiplisted, that passed before.

    `skipped(cell)` says whether the skiplists list the cell (the caller asks its skiplists, e.g.
    `skiplists.skipped`).
    """
    order = chain(baseline)
    rank = {commit: index for index, commit in enumerate(order)}
    runs_segment = {s.run_id: s for s in baseline.segments if s.run_id}
    asked = frozenset(commit for commit, _ in baseline.due)  # pushes that changed more than they ran
    found = []
    for cell, ms in sorted(baseline.cells.items()):
        broke = _last_break(ms)
        if broke is None or skipped(cell):
            continue
        good, bad = broke
        low, high = rank.get(good.commit, -1), rank.get(bad.commit)
        candidates = tuple(order[low + 1 : high + 1]) if high is not None else ()
        culprit = _culprit(bad, candidates, runs_segment, asked)
        found.append(Regression(cell, good, bad, culprit, candidates))
    return tuple(found)


def _last_break(ms: tuple[Measurement, ...]) -> tuple[Measurement, Measurement] | None:
    """The newest pass and the first failure after it (`ms` newest first), when the newest word is a failure."""
    # A crash, a timeout or a skip says nothing about the export: the newest result that does decides,
    # or a runner running out of memory would close the tracking issue as if the cell passed again.
    newest_word = next((said(m) for m in ms if said(m) is not None), None)
    if newest_word is not False:
        return None
    last_good = next((i for i, m in enumerate(ms) if said(m) is True), None)
    if last_good is None:
        return None
    return ms[last_good], [m for m in ms[:last_good] if said(m) is False][-1]


def _culprit(
    bad: Measurement, candidates: tuple[str, ...], runs_segment: Mapping[int, Segment], asked: frozenset[str]
) -> str | None:
    """The commit that broke a cell, when no bisect is needed: the only candidate, or the push that
    ran the cell and pushed that one commit alone (docs/baseline.md, "Regressions and culprits").

    The push is named only when no earlier candidate asked for a full sweep still pending: such a
    push (a shared path, the skiplists, the toolchain) may break cells its selection did not run,
    and the next push that runs them would otherwise take the blame.
    """
    if candidates == (bad.commit,):
        return bad.commit
    segment = runs_segment.get(bad.run_id)
    if bad.source == "push" and segment is not None and segment.commits == (bad.commit,):
        return None if asked.intersection(candidates[:-1]) else bad.commit
    return None


def sweep_due(baseline: Baseline, *, now: str, every_days: float) -> tuple[str, ...]:
    """Why a full sweep is due: none yet, the last one is too old, or a push since asked for one; () when none is."""
    if not baseline.full_sweeps:
        return ("no full sweep yet",)
    reasons = []
    commit, time = max(baseline.full_sweeps, key=lambda s: (s[1], s[0]))
    days = (to_instant(now) - to_instant(time)) / timedelta(days=1)
    if days >= every_days:
        reasons.append(
            f"the last full sweep (main@{commit[:7]}, {time}) is {days:.1f} days old (sweep-every-days = {every_days:g})"
        )
    rank = ranks(baseline)
    for due_commit, reason in _pending(baseline.due, baseline.full_sweeps, rank):
        reasons.append(f"{reason} (main@{due_commit[:7]})")
    return tuple(reasons)


def pending_due(baseline: Baseline, also: Iterable[tuple[str, str]] = ()) -> tuple[str, ...]:
    """The due reasons no full sweep has answered yet, each with its commit: the state's, and `also`'s
    ((commit, reason) a push found and its merge has not recorded yet)."""
    left = _pending((*baseline.due, *also), baseline.full_sweeps, ranks(baseline))
    return tuple(f"{reason} (main@{commit[:7]})" for commit, reason in left)


@dataclass(frozen=True)
class SweepStart:
    """Whether a due sweep is started now, and why (docs/workflows.md, "When the due sweep starts")."""

    start: bool
    why: str


def sweep_start(reasons: Sequence[str], unfinished: Iterable[int], folded: Collection[int]) -> SweepStart:
    """Start the due sweep now, unless one already started covers the reasons (pure).

    `reasons`: what is due and unanswered (the state's pending reasons and this push's own);
    `unfinished`: the sweeps already started and not finished (dispatched runs queued or in
    progress, this run left out); `folded`: the runs whose measurement main's state holds.

    An unfinished sweep whose measurement no merge has folded yet is still to measure: it covers
    the reasons, even one recorded after it began, because its own merge asks again once it has
    folded, and starts the next sweep for what it did not measure. So pushes in a row start one
    sweep, and at most one more queued behind it, never one each. A sweep whose measurement is
    folded has measured all it will: it covers nothing more.
    """
    if not reasons:
        return SweepStart(False, "no sweep due")
    measuring = sorted(run for run in set(unfinished) if run not in folded)
    if measuring:
        return SweepStart(
            False, f"run {measuring[0]} sweeps already; its merge starts the next one if this is still due"
        )
    return SweepStart(True, "; ".join(reasons))


def to_instant(text: str) -> datetime:
    """An ISO 8601 time as an aware datetime; a time without a zone is UTC, as GitHub's and the state's are.

    Raises ValueError for text that is no time.
    """
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def utc(text: str) -> str:
    """An ISO 8601 time in the one spelling the state keeps (`2026-12-02T07:14:10Z`), so times sort as text.

    Raises ValueError for text that is no time.
    """
    return to_instant(text).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
