"""The walk a run recorded (bot/run/observed_walk.py), read back from the results and followed by the skiplist commands.

Where the checkout's own test judged a cell, its JUnit carries the scopes the module's skip logic
looked up (`walk`) and those that only gate its generate drive (`walk_gate`). A proposal made from
those results follows that record: the scopes are the module's own, as it really walked them.
A cell with no record (the seed's rules judged it, or a run before records) follows the fallback:
the static reading of the module, else the bot's own walk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from bot.cells import Cell
from bot.outcomes import CellResult
from bot.scopes import ScopeWalk, describe_walk, exactness_scopes, gate_scopes, known_scopes, skip_scopes, walk_rank

WALK, GATE_WALK = "walk", "walk_gate"  # the testcase properties bot/run/junit.py writes


@dataclass(frozen=True, eq=False)  # hashed by identity: lint caches its coverage per walk
class RecordedWalk:
    """Per cell, the scopes its run looked up (skip, then gate); other cells follow `fallback` (None: the bot's own)."""

    records: Mapping[Cell, tuple[tuple[str, ...], tuple[str, ...]]]
    fallback: ScopeWalk | None = None
    name: str = "checkout:tests/exporters/test_export.py, as the run recorded it and as its text reads,"

    @property
    def describe(self) -> str:
        fallback = describe_walk(self.fallback)
        return (
            # What a PR author reads (the comment's proposal): the checkout's file, never the bot's source.
            f"the checkout's tests/exporters/test_export.py, as the run recorded its lookups for "
            f"{len(self.records):,} cells; any other cell: {fallback}"
        )

    def describe_for(self, cell: Cell) -> str:
        """Which walk this cell follows: its own record, or the fallback."""
        if cell in self.records:
            return "the checkout's tests/exporters/test_export.py, as the run recorded its lookups for this cell"
        return f"{describe_walk(self.fallback)} (the run recorded no walk for this cell)"

    def skip(self, cell: Cell) -> list[str]:
        record = self.records.get(cell)
        return list(record[0]) if record else skip_scopes(cell, self.fallback)

    def gate(self, cell: Cell) -> list[str]:
        record = self.records.get(cell)
        return list(record[1]) if record else gate_scopes(cell, self.fallback)

    def exactness(self, cell: Cell) -> list[str] | None:
        if cell in self.records:
            return None  # the checkout's test compares as it compares: no exactness scope of the bot's
        return exactness_scopes(cell, self.fallback)

    @cached_property
    def _fallback_known(self) -> tuple[str, ...]:
        return known_scopes(self.fallback)

    @cached_property
    def known(self) -> tuple[str, ...]:
        recorded = (s for skip, gate in self.records.values() for s in (*skip, *gate))
        return tuple(dict.fromkeys((*self._fallback_known, *recorded)))

    def rank(self, scope: str) -> tuple[int, str]:
        if scope in self._fallback_known:
            return walk_rank(scope, self.fallback)
        order = self.known
        return (order.index(scope), "") if scope in order else (len(order), scope)


def recorded_walk(results: Iterable[CellResult], fallback: ScopeWalk | None) -> RecordedWalk | None:
    """The walk the results recorded; None when no cell carries a record (then the fallback alone is followed)."""
    records = {}
    for result in results:
        properties = dict(result.properties)
        skip = tuple(s for s in properties.get(WALK, "").split(",") if s)
        if skip:
            records[result.cell] = (skip, tuple(s for s in properties.get(GATE_WALK, "").split(",") if s))
    return RecordedWalk(records, fallback) if records else None
