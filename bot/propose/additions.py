"""New skips for newly broken and new failing cells: minimal scopes per model class, drafted reasons."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bot.cells import BACKENDS, Cell, cells_for, placed
from bot.diff.groups import Group
from bot.diff.proposal import ADD, ProposedEdit, Uncoverable
from bot.outcomes import CellResult, Status
from bot.propose.minimize import minimal_scopes
from bot.propose.reasons import draft_reason, representative, same_as_reason, signature
from bot.scopes import ScopeWalk, walk_of
from bot.skiplist.model import EXPORT_SKIPS, Skiplists

Run = Mapping[Cell, CellResult]


def covered(cell: Cell, result: CellResult, skiplists: Skiplists) -> bool:
    """Whether the skiplists already take care of a failure (as the diff judges it)."""
    explanation = skiplists.explain(cell)
    return explanation.skipped or (result.stage == "compare" and explanation.exactness_scope is not None)


def addition_edits(
    results: Run, failures: Iterable[Cell], skiplists: Skiplists, causes: Mapping[str, Group] | None = None
) -> tuple[list[ProposedEdit], list[Uncoverable]]:
    """Entries that skip exactly the failing cells the skiplists do not cover yet, class by class.

    `causes` maps a cell id to the report's failure group holding it: entries of one cause
    draft their reason from the group and share one `Same … as` chain.
    """
    targets: dict[str, list[Cell]] = {}
    # A cell the bot cannot place (docs/cells.md) has no scope the bot knows the checkout's walk
    # reads: it is named for a skip by hand, never proposed under a guessed scope.
    unplaced: list[Uncoverable] = []
    for cell in sorted(set(failures)):
        result = results.get(cell)
        if result is None or not result.status.failing or covered(cell, result, skiplists):
            continue
        if placed(cell):
            targets.setdefault(cell.model_class, []).append(cell)
        else:
            unplaced.append(Uncoverable(cell.id, "", ()))
    rows: dict[str, dict[Cell, CellResult]] = {}
    for cell, result in results.items():
        if cell.model_class in targets and placed(cell):
            rows.setdefault(cell.model_class, {})[cell] = result
    drafts: list[tuple[str, str, list[CellResult]]] = []  # scope, class, evidence
    uncoverable: list[Uncoverable] = unplaced
    for model_class, must in targets.items():
        found, lost = _cover_class(model_class, must, rows[model_class], skiplists)
        drafts += found
        uncoverable += lost
    return _write_reasons(drafts, causes or {}, walk_of(skiplists.walk)), uncoverable


def _cover_class(model_class: str, must: list[Cell], row: Run, skiplists: Skiplists):
    """Skip scopes for the class's broken cells, exactness scopes for cells that only miss the comparison.

    As in the seed, a cell that exports and runs but does not match eager is better kept
    running without the comparison (`onnx.exactness`) than skipped, so that a real export
    break still shows. Where no exactness scope can take such a cell alone, it is skipped.
    """
    walk = walk_of(skiplists.walk)
    unknown = _unrun(model_class, row)
    forbid = [c for c, r in row.items() if r.status.passing or skiplists.explain(c).skipped]
    compared = _compared(row, skiplists, walk)
    exact_only = _exact_only(must, row, compared, walk)
    broken = [c for c in must if c not in exact_only]
    skips = minimal_scopes(
        broken, forbid, unknown=unknown, walk=walk.skip, rank=walk.rank
    )  # drifting cells may be swallowed: don't care
    left = [c for c in exact_only if not any(s in walk.skip(c) for s in skips.scopes)]
    exact = minimal_scopes(left, compared, unknown=unknown, walk=walk.exactness, rank=walk.rank)
    drafts = [
        (scope, model_class, [row[c] for c in cover.cells(scope)]) for cover in (skips, exact) for scope in cover.scopes
    ]
    return drafts, [_uncoverable(cell, forbid, walk) for cell in skips.uncoverable]


def _compared(row: Run, skiplists: Skiplists, walk: ScopeWalk) -> list[Cell]:
    """Cells a new exactness scope must leave alone: those that passed the comparison, or an exactness entry takes."""
    return [
        c
        for c, r in row.items()
        if walk.exactness(c) is not None and (r.status is Status.PASSED or skiplists.explain(c).exactness_scope)
    ]


def _exact_only(must: list[Cell], row: Run, compared: list[Cell], walk: ScopeWalk) -> set[Cell]:
    """The failing cells that only miss the comparison and that exactness scopes can take without a compared cell."""
    drift = [c for c in must if row[c].stage == "compare" and walk.exactness(c) is not None]
    return set(drift) - set(minimal_scopes(drift, compared, walk=walk.exactness, rank=walk.rank).uncoverable)


def _unrun(model_class: str, row: Run) -> list[Cell]:
    """Cells of the class's full row that did not run: a tie between covers goes to the one guessing less."""
    generative = any(cell.generate for cell in row)
    targets = sorted({cell.target for cell in row if cell.target}) or ["xnnpack"]
    full = cells_for(model_class, generative=generative, backends=BACKENDS, targets=targets)
    return [c for c in full if c not in row]


def _uncoverable(cell: Cell, forbid: list[Cell], walk: ScopeWalk) -> Uncoverable:
    finest = walk.skip(cell)[-1]
    return Uncoverable(cell.id, finest, tuple(c.id for c in sorted(forbid) if finest in walk.skip(c)))


def _write_reasons(
    drafts: list[tuple[str, str, list[CellResult]]], causes: Mapping[str, Group], walk: ScopeWalk
) -> list[ProposedEdit]:
    """The first class of each cause gets the full draft, the others `Same … as` it.

    A cause is the report's failure group of the entry's representative cell, across scopes;
    without one (a report from before groups), the (scope, error signature) pair.
    """
    chains: dict[tuple, list[tuple[str, str, list[CellResult]]]] = {}
    for scope, model_class, evidence in sorted(drafts, key=lambda d: (walk.rank(d[0]), d[1])):
        first = representative(evidence)
        group = causes.get(first.cell.id)
        key = ("group", group.stage, group.signature) if group is not None else (scope, signature(first))
        chains.setdefault(key, []).append((scope, model_class, evidence))
    edits = []
    for members in chains.values():
        _, head_class, _ = members[0]
        for scope, model_class, evidence in members:
            first = representative(evidence)
            group = causes.get(first.cell.id)
            if model_class == head_class:  # the chain's head, or its own class again under another scope
                reason = draft_reason(scope, evidence, group)
            else:
                reason = same_as_reason(head_class, first)
            edits.append(_add(scope, model_class, reason, evidence))
    return edits


def _add(scope: str, model_class: str, reason: str, evidence: list[CellResult]) -> ProposedEdit:
    cells = tuple(r.cell.id for r in evidence)
    return ProposedEdit(ADD, EXPORT_SKIPS, scope, model_class, reason=reason, evidence=cells)
