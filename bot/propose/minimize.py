"""Scope minimisation: the fewest skiplist scopes that cover a class's failing cells and no passing one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from bot.cells import BACKENDS, TARGETS, Cell, cells_for
from bot.scopes import skip_scopes, walk_rank

Walk = Callable[[Cell], "Sequence[str] | None"]

# Above this many search nodes the exact cover gives way to a greedy one. Real rows have a few
# dozen cells and forced choices, so the bound is only reached by adversarial inputs.
_SEARCH_BUDGET = 200_000


@dataclass(frozen=True)
class Cover:
    """The chosen scopes (walk order), the cells each one covers, and the cells no scope can take."""

    scopes: tuple[str, ...]
    covered: tuple[tuple[str, tuple[Cell, ...]], ...]  # scope → the must-cover cells it takes
    uncoverable: tuple[Cell, ...]

    def cells(self, scope: str) -> tuple[Cell, ...]:
        return dict(self.covered).get(scope, ())


def minimal_scopes(
    must: Iterable[Cell],
    forbid: Iterable[Cell] = (),
    *,
    unknown: Iterable[Cell] = (),
    walk: Walk = skip_scopes,
    allowed: Callable[[str], bool] | None = None,
    rank: Callable[[str], tuple[int, str]] = walk_rank,
) -> Cover:
    """The fewest scopes covering every `must` cell and no `forbid` cell.

    A scope covers a cell iff it is in `walk(cell)`. Cells in neither set (still failing,
    not run) may be covered. Ties go to the cover that reaches fewer `unknown` cells (cells
    that did not run, so a proposal does not guess about them), then to broader scopes (earlier
    in the walk, by `rank`). A `must` cell every candidate scope of which also covers a `forbid` cell
    cannot be addressed alone by the walk: it is left out and returned as uncoverable, because
    skipping a passing cell is never proposed.
    """
    must = sorted(set(must))
    candidates = _candidates(must, set(forbid), walk, allowed)
    key = _tie_keys(candidates, set(unknown), walk, rank)
    candidates = _drop_dominated(candidates, key)
    coverable = frozenset().union(*candidates.values()) if candidates else frozenset()
    chosen = _exact_cover(coverable, candidates, key)
    ordered = tuple(sorted(chosen, key=rank))
    return Cover(
        scopes=ordered,
        covered=tuple((scope, tuple(sorted(candidates[scope]))) for scope in ordered),
        uncoverable=tuple(cell for cell in must if cell not in coverable),
    )


def _candidates(
    must: list[Cell], forbid: set[Cell], walk: Walk, allowed: Callable[[str], bool] | None
) -> dict[str, frozenset[Cell]]:
    """Each allowed scope on a `must` cell's walk and on no `forbid` cell's, with the `must` cells it covers."""
    scopes_of = {cell: tuple(walk(cell) or ()) for cell in must}
    banned = {scope for cell in forbid for scope in walk(cell) or ()}
    candidates: dict[str, frozenset[Cell]] = {}
    for cell in must:
        for scope in scopes_of[cell]:
            if scope not in banned and (allowed is None or allowed(scope)):
                candidates.setdefault(scope, frozenset(c for c in must if scope in scopes_of[c]))
    return candidates


def _tie_keys(
    candidates: dict[str, frozenset[Cell]], unknown: set[Cell], walk: Walk, rank: Callable[[str], tuple[int, str]]
) -> dict[str, tuple]:
    """Each candidate's tie-break: how many `unknown` cells it reaches, then its place in the walk (broader first)."""
    return {scope: (sum(1 for cell in unknown if scope in (walk(cell) or ())), rank(scope)) for scope in candidates}


def _drop_dominated(candidates: dict[str, frozenset[Cell]], key: dict) -> dict[str, frozenset[Cell]]:
    """Drop a scope when another covers at least its cells and is at least as preferable."""
    kept = {}
    for scope, cells in candidates.items():
        # Swapping such a scope for its dominator never grows a cover nor worsens its tie-break key.
        if not any(
            other != scope and cells <= others and key[other] < key[scope] for other, others in candidates.items()
        ):
            kept[scope] = cells
    return kept


def _exact_cover(universe: frozenset[Cell], candidates: dict[str, frozenset[Cell]], key: dict) -> frozenset[str]:
    """Minimum-size set cover by iterative deepening; among minimum covers, the smallest sorted keys."""
    if not universe:
        return frozenset()
    by_cell: dict[Cell, list[str]] = {cell: [] for cell in universe}
    for scope, cells in candidates.items():
        for cell in cells:
            by_cell[cell].append(scope)
    search = _Search(candidates, by_cell, key)  # one node budget for every depth
    for depth in range(1, len(universe) + 1):
        try:
            best = search.covers(universe, depth)
        except _Budget:
            return _greedy_cover(universe, candidates, key)
        if best:
            return min(best, key=lambda item: item[0])[1]
    raise AssertionError("every cell of the universe has a candidate, so a cover exists")


class _Search:
    """Depth-bounded search for the covers of a given size, counting the nodes it visits."""

    def __init__(self, candidates: dict[str, frozenset[Cell]], by_cell: dict[Cell, list[str]], key: dict) -> None:
        self.candidates, self.by_cell, self.key = candidates, by_cell, key
        self.nodes = 0

    def covers(self, universe: frozenset[Cell], depth: int) -> list[tuple]:
        """(sorted keys, scopes) of every distinct cover of at most `depth` scopes."""
        self.best: list[tuple] = []
        self.seen: set[frozenset[str]] = set()
        self.depth = depth
        self._visit(frozenset(), universe)
        return self.best

    def _visit(self, chosen: frozenset[str], left: frozenset[Cell]) -> None:
        self.nodes += 1
        if self.nodes > _SEARCH_BUDGET:
            raise _Budget
        if not left:
            if chosen not in self.seen:
                self.seen.add(chosen)
                self.best.append((sorted(self.key[s] for s in chosen), chosen))
            return
        if len(chosen) == self.depth:
            return
        # Branch on the cell with the fewest options: forced choices first keep the tree small.
        cell = min(left, key=lambda c: (len(self.by_cell[c]), c))
        for scope in self.by_cell[cell]:
            if scope not in chosen:
                self._visit(chosen | {scope}, left - self.candidates[scope])


class _Budget(Exception):
    pass


def _greedy_cover(universe: frozenset[Cell], candidates: dict[str, frozenset[Cell]], key: dict) -> frozenset[str]:
    chosen: set[str] = set()
    left = set(universe)
    while left:
        scope = min(candidates, key=lambda s: (-len(candidates[s] & left), key[s]))
        chosen.add(scope)
        left -= candidates[scope]
    return frozenset(chosen)


@cache
def template_coverage(scope: str, walk: Walk = skip_scopes) -> frozenset[Cell]:
    """The cells of a model-agnostic full row (every backend, target, variant) that `scope` covers."""
    return frozenset(cell for cell in _template_row() if scope in (walk(cell) or ()))


@lru_cache(maxsize=1)
def _template_row() -> tuple[Cell, ...]:
    return tuple(cells_for("_", generative=True, backends=BACKENDS, targets=TARGETS))


def within(scope: str, walk: Walk = skip_scopes) -> Callable[[str], bool]:
    """A filter for scopes that never reach beyond `scope` on any cell: the legal narrowings."""
    outer = template_coverage(scope, walk)

    def allowed(candidate: str) -> bool:
        inner = template_coverage(candidate, walk)
        return bool(inner) and inner <= outer

    return allowed
