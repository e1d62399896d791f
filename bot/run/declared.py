"""What a checkout's export test declares about its variant: the arguments its parameterized expansion binds.

A test name spells its variant in words (`…_generate_dynamic_multi_token_static_cache_xnnpack`),
and the grammar in bot/cells.py reads them. The module itself says more exactly what each
expansion is: `parameterized.expand` binds `dynamic`, `generation_config`, the ExecuTorch
`backend` and the other axes to the test function it wraps. The runner reads those bindings off
the expanded method (never by running it) and checks the name's reading against them: a test
whose name reads as another variant than it declares keeps its reading (its id is its name) and is
said as a warning naming both (docs/cells.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from bot.cells import Cell

_SHAPE_ARGUMENT = "dynamic"
_CACHE_ARGUMENTS = ("generation_config", "static_cache")
_TARGET_ARGUMENT = "backend"  # the ExecuTorch delegate, as upstream's `EXECUTORCH_*_PARAMS` name it


def declared_arguments(method: Any) -> dict[str, object] | None:
    """The arguments parameterized's expansion binds to the test function, by parameter name; None when not expanded.

    `parameterized` keeps the wrapped function as `place_as` and its `param` in the closure of the
    method it adds; only the signature of the wrapped function and that closure are read.
    """
    function = getattr(method, "place_as", None)
    if not callable(function) or getattr(method, "__closure__", None) is None:
        return None
    try:
        param = inspect.getclosurevars(method).nonlocals.get("p")
        args, kwargs = tuple(param.args), dict(param.kwargs)
        bound = inspect.signature(function).bind_partial(None, *args, **kwargs)
    except (AttributeError, TypeError, ValueError):
        return None
    arguments = dict(bound.arguments)
    arguments.pop(next(iter(arguments), ""), None)  # `self`
    return arguments


def disagreement(cell: Cell, arguments: Mapping[str, object]) -> str | None:
    """Where the name's reading (`cell`) and the declared arguments differ, said in one line; None when they agree."""
    problems = (differs(cell, arguments) for differs in _ASPECTS)
    return "; ".join(problem for problem in problems if problem) or None


def _shape_differs(cell: Cell, arguments: Mapping[str, object]) -> str | None:
    dynamic = arguments.get(_SHAPE_ARGUMENT)
    if isinstance(dynamic, bool) and cell.shape != ("dynamic" if dynamic else "static"):
        return f"it declares dynamic={dynamic}, the name reads shape `{cell.shape}`"
    return None


def _cache_differs(cell: Cell, arguments: Mapping[str, object]) -> str | None:
    cache = _declared_cache(arguments)
    if cache is not None and cell.generate and cell.cache != cache:
        return f"it declares a {cache} cache, the name reads `{cell.cache}`"
    return None


def _target_differs(cell: Cell, arguments: Mapping[str, object]) -> str | None:
    target = arguments.get(_TARGET_ARGUMENT)
    # A cell carries a target only when its backend declares targets (the grammar checks it).
    if cell.target is not None and isinstance(target, str) and cell.target != target:
        return f"it declares backend={target!r}, the name reads target `{cell.target}`"
    return None


def _axes_differ(cell: Cell, arguments: Mapping[str, object]) -> str | None:
    axes = [
        name for name, value in arguments.items() if value is True and name not in (_SHAPE_ARGUMENT, *_CACHE_ARGUMENTS)
    ]
    if bool(axes) != bool(cell.axes):
        return f"it declares {', '.join(axes) or 'no further axis'}, the name reads axes `{cell.axes}`"
    return None


# Said in this order, one clause each.
_ASPECTS = (_shape_differs, _cache_differs, _target_differs, _axes_differ)


def _declared_cache(arguments: Mapping[str, object]) -> str | None:
    if "generation_config" in arguments:
        config = arguments["generation_config"]
        return "static" if getattr(config, "cache_implementation", None) == "static" else "dynamic"
    static_cache = arguments.get("static_cache")
    return ("static" if static_cache else "dynamic") if isinstance(static_cache, bool) else None
