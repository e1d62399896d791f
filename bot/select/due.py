"""Why a push to main makes every cell due for re-measuring (docs/workflows.md "When the full sweep runs"), pure."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.select.rules import match_path
from bot.select.selection import Sample
from bot.settings import Settings

# A caller pins export-bot twice, `uses: …/.github/workflows/X.yml@SHA` and `bot-ref: SHA`.
_PIN = re.compile(r"^\s*(?:-\s*)?(?:uses:\s*\S+/\.github/workflows/\S+@|bot-ref:\s*)([0-9a-f]{40})\b", re.M)


def bot_pins(text: str | None) -> frozenset[str]:
    """The export-bot commits a caller workflow pins (none for a missing file)."""
    return frozenset(_PIN.findall(text or ""))


def sweep_reasons(
    paths: Iterable[str],
    settings: Settings,
    *,
    pins: Mapping[str, tuple[str | None, str | None]] | None = None,
    sample: Sample | None = None,
    settings_keys: Iterable[str] = (),
) -> tuple[str, ...]:
    """The reasons a full sweep is due after a push changing `paths`, or () when its own cells are enough.

    - a shared path changed: every model exports through it, the push ran only the `core` preset;
    - a skiplist changed: its entries decide which cells are probes and which are gated;
    - the bot's pin changed in a caller workflow (`pins`: path → its text before and after the
      push): the new bot measures with its own toolchain (torch, the exporters, its harness and
      judging, pinned by its constraints-runner.txt), so no earlier result compares with the next;
    - the push reached more classes through the import graph than it ran (`sample`): the rest is
      measured by the sweep;
    - the push changed `[tool.export-bot]` (`settings_keys`, the keys it sets differently): the
      push itself was judged by the settings before it, and every cell may be judged differently
      by the new ones (a widened `backends` gates cells no run measured, new thresholds judge old
      results anew), so all are re-measured.
    """
    paths = list(dict.fromkeys(paths))
    reasons = []
    shared = [p for p in paths if match_path(p, settings.shared_paths)]
    if shared:
        reasons.append("shared: " + _some(shared))
    skiplists = [p for p in paths if match_path(p, settings.skiplist_paths)]
    if skiplists:
        reasons.append("skiplists: " + _some(skiplists))
    if sample:
        reasons.append(
            f"imports: {_some(list(sample.paths))} reached {sample.reached:,} classes, {len(sample.sampled)} sampled"
        )
    keys = sorted({key.replace("_", "-") for key in settings_keys})
    if keys:
        reasons.append(f"settings: {', '.join(keys)} in [tool.export-bot]")
    for path, (before, after) in sorted((pins or {}).items()):
        old, new = bot_pins(before), bot_pins(after)
        if new and old != new:
            reasons.append(f"toolchain: {path} pins export-bot {_short(old)} → {_short(new)}")
    return tuple(reasons)


def _some(paths: list[str]) -> str:
    return paths[0] + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")


def _short(pins: frozenset[str]) -> str:
    return ",".join(sorted(p[:12] for p in pins)) or "nothing"
