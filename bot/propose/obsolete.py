"""Obsolete skips: entries whose cells now pass in probe runs are removed, or narrowed to what still fails."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence

from bot.cells import Cell
from bot.diff.proposal import NARROW, REMOVE, ProposedEdit
from bot.outcomes import RAN_NOTHING, CellResult, Status
from bot.propose.minimize import Walk, minimal_scopes, template_coverage, within
from bot.scopes import ScopeWalk, walk_of
from bot.skiplist.model import Entry, Skiplist

log = logging.getLogger(__name__)

SweepResults = Mapping[Cell, CellResult]


def is_exactness_scope(scope: str) -> bool:
    return scope == "exactness" or scope.endswith(".exactness")


def walk_for(scope: str, walk: ScopeWalk | None = None) -> Walk:
    """Skip entries follow the skip walk of `walk` (None: the bot's); `.exactness` entries its exactness walk."""
    return walk_of(walk).exactness if is_exactness_scope(scope) else walk_of(walk).skip


def evidence(result: CellResult | None, exactness: bool) -> bool | None:
    """True when the run shows the entry is not needed for this cell, False when it is, None when it says nothing.

    For an exactness entry only a compared pass counts: `passed-uncompared` means the
    comparison was dropped, so it proves nothing about whether it would hold. A pass that ran
    nothing of the program (a runtime limit tolerated) proves nothing either.
    """
    if result is None or (result.status is Status.PASSED and result.compared in RAN_NOTHING):
        return None
    if exactness:
        if result.status is Status.PASSED:
            return True
        return False if result.status.failing else None
    if result.status.passing:
        return True
    return False if result.status.failing else None


def pass_streak(cell: Cell, runs: Sequence[SweepResults], exactness: bool) -> int | None:
    """Consecutive passes of `cell`, newest run first; runs without a result for it are passed over.

    None when no run says anything about the cell. A failure ends the count: an older pass
    before it does not add up.
    """
    streak, seen = 0, False
    for run in reversed(runs):
        verdict = evidence(run.get(cell), exactness)
        if verdict is None:
            continue
        seen = True
        if not verdict:
            break
        streak += 1
    return streak if seen else None


def obsolete_edits(
    skiplist: Skiplist, runs: Sequence[SweepResults], min_passes: int, walk: ScopeWalk | None = None
) -> Iterator[ProposedEdit]:
    """Remove entries whose every observed cell passed `min_passes` times in a row; narrow partial ones."""
    if not runs:
        return
    by_class: dict[str, set[Cell]] = {}
    for run in runs:
        for cell in run:
            by_class.setdefault(cell.model_class, set()).add(cell)
    listed = {(e.scope, e.model_class) for e in skiplist.entries()}
    scope_walk = walk_of(walk)
    for entry in skiplist.entries():
        if entry.scope not in scope_walk.known:
            continue  # an open-ended scope the walk does not reach: no cell can vouch for it
        edit = _judge(entry, by_class.get(entry.model_class, set()), runs, min_passes, listed, scope_walk)
        if edit is not None:
            yield edit


def _judge(
    entry: Entry, cells: set[Cell], runs: Sequence[SweepResults], k: int, listed: set, scope_walk: ScopeWalk
) -> ProposedEdit | None:
    walk = walk_for(entry.scope, scope_walk)
    passed, still = _by_streak(entry.scope, cells, runs, k, walk)
    if not passed:
        return None
    ids = tuple(c.id for c in passed)
    if not still:
        return ProposedEdit(REMOVE, entry.file, entry.scope, entry.model_class, evidence=ids)
    scopes = _narrower(entry.scope, still, passed, walk, scope_walk.rank)
    if entry.scope in scopes or _same_cells(scopes, entry.scope, walk):
        log.info(
            "%s in %s: %d cells pass, but no narrower scope keeps the failing ones",
            entry.model_class,
            entry.scope,
            len(passed),
        )
        return None
    new_scopes = tuple(sorted((s for s in scopes if (s, entry.model_class) not in listed), key=scope_walk.rank))
    if not new_scopes:
        # Every narrower scope already lists the class: this broad entry only repeats them.
        return ProposedEdit(REMOVE, entry.file, entry.scope, entry.model_class, evidence=ids)
    return ProposedEdit(
        NARROW,
        entry.file,
        entry.scope,
        entry.model_class,
        new_scopes=new_scopes,
        evidence=ids,
        still_failing=tuple(c.id for c in still),
    )


def _by_streak(
    scope: str, cells: set[Cell], runs: Sequence[SweepResults], k: int, walk: Walk
) -> tuple[list[Cell], list[Cell]]:
    """The scope's observed cells that passed `k` runs in a row, and those that did not, sorted."""
    exactness = is_exactness_scope(scope)
    covered = sorted(c for c in cells if scope in (walk(c) or ()))
    streaks = {c: pass_streak(c, runs, exactness) for c in covered}
    observed = [c for c in covered if streaks[c] is not None]
    return [c for c in observed if streaks[c] >= k], [c for c in observed if streaks[c] < k]


def _narrower(
    scope: str, still: list[Cell], passed: list[Cell], walk: Walk, rank: Callable[[str], tuple[int, str]]
) -> set[str]:
    """Scopes within `scope` that keep the still-failing cells skipped and leave as few passing ones as they can."""
    allowed = within(scope, walk)
    cover = minimal_scopes(still, passed, walk=walk, allowed=allowed, rank=rank)
    scopes = set(cover.scopes)
    # A still-failing cell no narrower scope can take alone keeps the finest scope that holds it:
    # narrowing may leave a passing cell skipped, never unskip a failing one.
    for cell in cover.uncoverable:
        scopes.add([s for s in walk(cell) or () if allowed(s)][-1])
    return scopes


def _same_cells(scopes: set[str], scope: str, walk: Walk) -> bool:
    union = frozenset().union(*(template_coverage(s, walk) for s in scopes)) if scopes else frozenset()
    return union == template_coverage(scope, walk)
