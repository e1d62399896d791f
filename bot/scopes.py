"""The scope walk of docs/skiplists.md, defined once: which skiplist scopes apply to a cell, broad to specific."""

from __future__ import annotations

from typing import Protocol

from bot import registry
from bot.cells import BACKENDS, TARGETS, Cell, cells_for, placed


class ScopeWalk(Protocol):
    """Another version's walk (bot/skiplist/checkout_walk.py): what a checkout's own export tests visit."""

    name: str
    known: tuple[str, ...]
    describe: str  # which walk it is, in one phrase (every explanation and proposal says it)

    def skip(self, cell: Cell) -> list[str]: ...

    def exactness(self, cell: Cell) -> list[str] | None: ...

    def gate(self, cell: Cell) -> list[str]: ...

    def rank(self, scope: str) -> tuple[int, str]: ...


class BotWalk:
    """The bot's own walk (the seed's, docs/skiplists.md) as a `ScopeWalk`, for code that asks a walk object."""

    name = "bot"
    describe = "the bot's own (docs/skiplists.md)"

    @property
    def known(self) -> tuple[str, ...]:
        return _seed_scopes()

    def skip(self, cell: Cell) -> list[str]:
        return _seed_skip_scopes(cell)

    def exactness(self, cell: Cell) -> list[str] | None:
        return _seed_exactness_scopes(cell)

    def gate(self, cell: Cell) -> list[str]:
        return []

    def rank(self, scope: str) -> tuple[int, str]:
        return walk_rank(scope)


BOT_WALK = BotWalk()


def walk_of(walk: ScopeWalk | None) -> ScopeWalk:
    """The walk that applies: `walk`, else the bot's own (None stands for it everywhere else)."""
    return BOT_WALK if walk is None else walk


def describe_walk(walk: ScopeWalk | None, cell: Cell | None = None) -> str:
    """Which walk `walk` is (for `cell`, when the walk differs per cell), in one phrase: none guesses."""
    if walk is None:
        return "the bot's own (docs/skiplists.md)"
    per_cell = getattr(walk, "describe_for", None)  # a recorded walk: the record, or its fallback
    return per_cell(cell) if cell is not None and per_cell is not None else walk.describe


def export_scopes(*, generate: bool, dynamic: bool, backend: str | None, static_cache: bool) -> list[str]:
    """The seed's `_export_scopes`, verbatim in order. Extend the walk here and only here."""
    scopes = ["all"]
    if generate:
        scopes.append("generate")
        if dynamic:
            scopes.append("generate.dynamic")
    scopes.append("dynamic" if dynamic else "static")
    if static_cache:
        scopes.append("static-cache")
    if backend:
        scopes.append(backend)
        if generate:
            scopes.append(f"{backend}.generate")
        scopes.append(f"{backend}.dynamic" if dynamic else f"{backend}.static")
        if static_cache:
            scopes.append(f"{backend}.static-cache")
    return scopes


def _walk(cell: Cell, backend: str | None) -> list[str]:
    return export_scopes(generate=cell.generate, dynamic=cell.dynamic, backend=backend, static_cache=cell.static_cache)


def skip_scopes(cell: Cell, walk: ScopeWalk | None = None) -> list[str]:
    """Scopes whose entries skip `cell` under `walk` (None: the seed's), in the order the first match is reported.

    A backend declaring targets walks its name and then the cell's target (`Backend.skip_walk`: the
    seed's ExecuTorch test calls `any(_should_skip(..., backend=scope) for scope in ("executorch", backend))`).
    """
    return walk.skip(cell) if walk is not None else _seed_skip_scopes(cell)


def gate_scopes(cell: Cell, walk: ScopeWalk | None = None) -> list[str]:
    """Scopes whose entries gate only part of `cell` (its generate drive: the export still runs), in walk order.

    The seed has none; a checkout's module may (upstream's `generate.runtime…`).
    """
    return walk.gate(cell) if walk is not None else []


def _seed_skip_scopes(cell: Cell) -> list[str]:
    if not placed(cell):  # a checkout's test on a backend the seed has not (or none): no scope of its walk
        return []
    walks = [
        scope for backend in registry.BY_NAME[cell.backend].skip_walk(cell.target) for scope in _walk(cell, backend)
    ]
    return list(dict.fromkeys(walks))


def exactness_scopes(cell: Cell, walk: ScopeWalk | None = None) -> list[str] | None:
    """Scopes whose entries drop the eager comparison of `cell`; None when the cell never compares values.

    Follows the seed's quirks exactly: forward torch.export calls `_should_skip_exactness`
    without a backend; generate torch.export passes `backend="dynamo"`; forward ONNX and
    OpenVINO pass their backend; generate ONNX/OpenVINO compare output names only and
    ExecuTorch compares output counts only, so no exactness scope concerns them.
    """
    return walk.exactness(cell) if walk is not None else _seed_exactness_scopes(cell)


def _seed_exactness_scopes(cell: Cell) -> list[str] | None:
    if not placed(cell):
        return None
    declared = registry.BY_NAME[cell.backend]
    if declared.compares(cell.generate) != "values":
        return None
    backend = cell.backend if (cell.generate or declared.forward_exactness_named) else None
    return [exactness_scope(scope) for scope in _walk(cell, backend)]


def exactness_scope(scope: str) -> str:
    """`all` narrows to a bare `exactness`, the way `generate` and `dynamic` are spelled."""
    return "exactness" if scope == "all" else f"{scope}.exactness"


def onnx_optimize_scopes(cell: Cell) -> list[str] | None:
    """Scopes of the ONNX_DISABLE_OPTIMIZE toggle for `cell`; None for non-ONNX cells.

    The seed's `_onnx_optimize_enabled` walks `all`, plus `dynamic` for dynamic cells.
    """
    # The toggle is ONNX's own optimiser pass (the seed's ONNX test reads it), not a rule a backend declares.
    if cell.backend != "onnx":
        return None
    return ["all"] + (["dynamic"] if cell.dynamic else [])


def known_scopes(walk: ScopeWalk | None = None) -> tuple[str, ...]:
    """Every scope `walk` can reach (None: the seed's), broad to specific."""
    return walk.known if walk is not None else _seed_scopes()


@registry.cached(maxsize=1)
def _seed_scopes() -> tuple[str, ...]:
    """Every scope some cell's walk can reach, skip and exactness alike, broad to specific.

    The order is the walk's (backend-agnostic scopes, then each backend and target in turn),
    each scope followed by its `.exactness` twin; new tables are placed by it. Anything
    else in a skiplist is an unknown scope: it loads and lints as a warning.
    """
    reachable: set[str] = set()
    for cell in cells_for("_", generative=True, backends=BACKENDS, targets=TARGETS):
        reachable.update(_seed_skip_scopes(cell))
        reachable.update(_seed_exactness_scopes(cell) or ())
    ordered: list[str] = []
    for prefix in (None, *BACKENDS, *TARGETS):
        for scope in _variants(prefix):
            ordered += [s for s in (scope, exactness_scope(scope)) if s in reachable]
    return tuple(dict.fromkeys(ordered))


def _variants(prefix: str | None) -> list[str]:
    if prefix is None:
        return ["all", "generate", "generate.dynamic", "dynamic", "static", "static-cache"]
    return [prefix] + [f"{prefix}.{v}" for v in ("generate", "dynamic", "static", "static-cache")]


def walk_rank(scope: str, walk: ScopeWalk | None = None) -> tuple[int, str]:
    """Sort key that places a scope where it falls in `walk` (None: the seed's; unknown scopes last)."""
    if walk is not None:
        return walk.rank(scope)
    order = _seed_scopes()
    return (order.index(scope), "") if scope in order else (len(order), scope)
