"""The scope walk a checkout's export test really took for one cell, observed while it runs, never re-created.

A checkout's module decides in its own `_should_skip` which skip-table scopes apply (inline in
upstream's newer modules, through `_export_scopes` in the seed). Rather than interpret that code,
the runner watches it: while the cell's test runs, the module's `EXPORT_SKIPS` is a recording
table (every scope looked up is noted, in order) and each `_should_skip` call is noted with its
arguments and answer. What a call with `runtime=True` looks up only gates the generate drive (the
export itself ran); what any other call looks up decides whether the test exports at all.
The record becomes the cell's JUnit properties (bot/run/junit.py), and the skiplist commands
follow it (bot/results/recorded_walk.py) before any reading of the module's text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

TABLE = "EXPORT_SKIPS"
SKIP_METHOD = "_should_skip"
GATE_ARGUMENT = "runtime"  # upstream: `runtime=True` asks whether to drive the exported graphs through `generate`


@dataclass(frozen=True)
class WalkCall:
    """One `_should_skip` call: the scopes it looked up in order, whether it only gates, what it answered."""

    scopes: tuple[str, ...]
    gate: bool
    skipped: bool
    matched: str | None  # the scope whose table listed the class, when one did


@dataclass
class WalkRecorder:
    """Collects the lookups of the recording table and the calls of the wrapped `_should_skip` during one run."""

    lookups: list[str] = field(default_factory=list)
    calls: list[WalkCall] = field(default_factory=list)
    table: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    setup_seconds: float = 0.0  # in the tester's own `setUp()`, for the cell's time breakdown

    def wrap(self, method: Any) -> Any:
        """`_should_skip` as the test calls it, noting each call's lookups and answer."""

        def _should_skip(instance, model_class, *args, **kwargs):
            start = len(self.lookups)
            answer = method(instance, model_class, *args, **kwargs)
            scopes = tuple(dict.fromkeys(self.lookups[start:]))
            name = getattr(model_class, "__name__", "")
            matched = next((s for s in scopes if name in self.table.get(s, {})), None) if answer else None
            self.calls.append(WalkCall(scopes, bool(kwargs.get(GATE_ARGUMENT)), bool(answer), matched))
            return answer

        return _should_skip

    @property
    def skip_walk(self) -> tuple[str, ...]:
        """Scopes the calls that decide whether the test exports looked up, in order, once each."""
        return tuple(dict.fromkeys(s for call in self.calls if not call.gate for s in call.scopes))

    @property
    def gate_walk(self) -> tuple[str, ...]:
        """Scopes only the gating calls looked up: they gate part of the test, never skip it."""
        skip = set(self.skip_walk)
        return tuple(dict.fromkeys(s for call in self.calls if call.gate for s in call.scopes if s not in skip))

    def skipped_by(self) -> WalkCall | None:
        """The deciding call that passed over the class (the test then exports nothing for it)."""
        return next((call for call in self.calls if call.skipped and not call.gate), None)

    def gated_by(self) -> str | None:
        """The gate scope that listed the class: exported and compared, never driven through `generate`."""
        return next((call.matched for call in self.calls if call.gate and call.matched), None)


class _RecordingTable(dict):
    """The module's skip table, unchanged, noting each scope looked up (`get`, `in`)."""

    def __init__(self, table: Mapping, lookups: list[str]) -> None:
        super().__init__(table)
        self._lookups = lookups

    def get(self, key, default=None):
        self._lookups.append(key)
        return super().get(key, default)

    def __contains__(self, key) -> bool:
        self._lookups.append(key)
        return super().__contains__(key)


@contextlib.contextmanager
def recording(module: MutableMapping[str, Any] | None, recorder: WalkRecorder) -> Iterator[None]:
    """Within the block the module's skip table records its lookups; the table itself is put back after."""
    table = module.get(TABLE) if module is not None else None
    if not isinstance(table, dict):
        yield
        return
    recorder.table = {scope: dict(classes) for scope, classes in table.items() if isinstance(classes, Mapping)}
    module[TABLE] = _RecordingTable(table, recorder.lookups)
    try:
        yield
    finally:
        module[TABLE] = table
