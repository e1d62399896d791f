"""The text `export-bot skiplist explain` prints for one cell: pure, from an `Explanation`."""

from __future__ import annotations

from bot import registry
from bot.scopes import describe_walk, exactness_scopes, gate_scopes, onnx_optimize_scopes, skip_scopes
from bot.skiplist.model import Explanation, Skiplists


def render_explanation(explanation: Explanation, skiplists: Skiplists) -> str:
    """The explanation as `skiplist explain` prints it, in the scopes of the skiplists' walk."""
    cell, walk = explanation.cell, skiplists.walk
    lines = [
        cell.id,
        f"  walk: {describe_walk(walk, cell)}",
        f"  skip scopes walked: {' → '.join(skip_scopes(cell, walk))}",
    ]
    gates = gate_scopes(cell, walk)
    if gates:
        lines.append(f"  gate scopes walked (the export runs; they gate only the generate drive): {' → '.join(gates)}")
    if explanation.skipped:
        lines.append(f"  skipped by scope `{explanation.scope}`: {explanation.reason}")
        lines += _referenced(skiplists, explanation.scope, explanation.reason)
    elif explanation.exactness_scope:
        lines.append(
            f"  runs, with the comparison against eager dropped by `{explanation.exactness_scope}` "
            f"(outcome passed-uncompared): {explanation.exactness_reason}"
        )
        lines += _referenced(skiplists, explanation.exactness_scope, explanation.exactness_reason)
    elif explanation.gate_scope:
        lines.append(
            f"  runs, and its generate drive is gated by `{explanation.gate_scope}` (exported and compared, "
            f"never driven through generate): {explanation.gate_reason}"
        )
        lines += _referenced(skiplists, explanation.gate_scope, explanation.gate_reason)
    else:
        lines.append(f"  runs: no skiplist entry applies; {_comparison(cell, walk is None)}")
    walked = exactness_scopes(cell, walk)
    if walked is not None:
        lines.append(f"  exactness scopes walked: {' → '.join(walked)}")
    if onnx_optimize_scopes(cell) is not None:
        if explanation.onnx_optimize:
            lines.append("  ONNX optimizer: on")
        else:
            lines.append(
                f"  ONNX optimizer: off (ONNX_DISABLE_OPTIMIZE `{explanation.onnx_optimize_scope}`): "
                f"{explanation.onnx_optimize_reason}"
            )
    if cell.static_cache:
        # Not a skiplist matter: the runner asks the model class itself, which needs torch.
        lines.append(
            f"  static cache: the runner also skips this cell as unsupported by the environment when "
            f"`{cell.model_class}._can_compile_fullgraph` is False (checked at run time, not in a skiplist)"
            + ("; `static-cache` scopes apply only to this variant" if walk is None else "")
        )
    return "\n".join(lines)


def _referenced(skiplists: Skiplists, scope: str | None, reason: str | None) -> list[str]:
    entry = skiplists.skips.referenced(scope or "", reason or "")
    if entry is None:
        return []
    return [f"    `{entry.model_class}` in `{entry.scope}`: {entry.reason}"]


def _comparison(cell, seed_walk: bool) -> str:
    if not seed_walk:
        return "the checkout's own test decides how it compares with eager"
    declared = registry.BY_NAME.get(cell.backend)
    compares = declared.compares(cell.generate) if declared is not None else "values"
    if compares == "count":
        return "compares output counts with eager"
    if compares == "names":
        return "compares output names with eager"
    return "compares outputs with eager"
