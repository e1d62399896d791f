"""Why a push to main makes every cell due for re-measuring (docs/workflows.md "When the full sweep runs"), pure."""

from __future__ import annotations

from collections.abc import Iterable

from bot.select.rules import match_path
from bot.settings import Settings


def sweep_reasons(
    paths: Iterable[str], settings: Settings, *, toolchain: str | None = None, recorded: str | None = None
) -> tuple[str, ...]:
    """The reasons a full sweep is due after a push changing `paths`, or () when its own cells are enough.

    - a shared path changed: every model exports through it, the push ran only the `core` preset;
    - a skiplist changed: its entries decide which cells are probes and which are gated;
    - the toolchain differs from the one the newest full sweep recorded (`recorded`): torch, the
      exporters and the bot measure every cell, so every result was taken with another instrument.
      The toolchain is what the workflow names (the sha256 of the bot's constraints-runner.txt at
      the pinned bot-ref); no toolchain given, or none recorded yet (no full sweep since this was
      tracked), is not a reason: the missing full sweep is one already.
    """
    paths = list(dict.fromkeys(paths))
    reasons = []
    shared = [p for p in paths if match_path(p, settings.shared_paths)]
    if shared:
        reasons.append("shared: " + _some(shared))
    skiplists = [p for p in paths if match_path(p, settings.skiplist_paths)]
    if skiplists:
        reasons.append("skiplists: " + _some(skiplists))
    if toolchain and recorded and toolchain != recorded:
        reasons.append(f"toolchain: {recorded[:12]} → {toolchain[:12]}")
    return tuple(reasons)


def _some(paths: list[str]) -> str:
    return paths[0] + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")
