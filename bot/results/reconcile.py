"""The head's results held against the selection that asked for them: which selected cells have no result."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bot.cells import Cell
from bot.results.model import ResultSet


@dataclass(frozen=True)
class Reconciled:
    """The selected cells the results lack, and what to run again to get them (docs/outcomes.md, Missing)."""

    selected: int  # how many cells the selection asked for
    missing: tuple[Cell, ...] = ()  # by id
    # `I/N` of the shards the selection's split put the missing cells in; empty: the split does not
    # say (no split, or a cell outside it), so the whole run is to be run again.
    shards: tuple[str, ...] = ()


def reconcile(results: ResultSet, selected: Collection[Cell], split: Sequence[Sequence[str]] = ()) -> Reconciled:
    """Every selected cell must have a result: the ones without are missing, never a pass.

    `split` is the selection file's `shards` (cell ids per shard, as `export-bot select` split them
    and `run --shard I/N` runs them): it names the shards that held the missing cells.
    """
    have = results.results
    missing = tuple(sorted((cell for cell in set(selected) if cell not in have), key=lambda cell: cell.id))
    return Reconciled(len(set(selected)), missing, _shards_of(missing, split))


def _shards_of(missing: tuple[Cell, ...], split: Sequence[Sequence[str]]) -> tuple[str, ...]:
    if not missing or not split:
        return ()
    shard_of = {cell_id: index for index, ids in enumerate(split, 1) for cell_id in ids}
    indexes = {shard_of.get(cell.id) for cell in missing}
    if None in indexes:  # the split does not hold every missing cell: it says nothing reliable
        return ()
    return tuple(f"{index}/{len(split)}" for index in sorted(indexes))
