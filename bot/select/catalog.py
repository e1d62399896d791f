"""What selection knows about classes (from bot/models/catalog.py): which the zoo builds, which generate, the `core` preset."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.models.catalog import GENERATIVE_SUFFIXES  # a class outside the catalogue generates when its name says so
from bot.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Catalog:
    """Recipes' generative flags and buildable set (None when the source's classes are unknown), and the core preset."""

    generative: dict[str, bool]
    buildable: frozenset[str] | None
    core: tuple[str, ...]
    notes: tuple[str, ...] = ()
    families: Mapping[str, str] = field(default_factory=dict)  # class → its family (bot/models/catalog.py FAMILIES)

    def is_generative(self, model_class: str) -> bool:
        known = self.generative.get(model_class)
        return known if known is not None else model_class.endswith(GENERATIVE_SUFFIXES)

    def unbuildable(self, classes) -> tuple[str, ...]:
        return () if self.buildable is None else tuple(sorted(c for c in classes if c not in self.buildable))


def load_catalog(settings: Settings) -> Catalog:
    """Read the model-class catalogue (bot/models/catalog.py, no torch); `[tool.export-bot] core` overrides its `core` preset."""
    from bot.models import catalog

    notes = []
    try:
        entries = catalog.load().entries
    except (OSError, ValueError, KeyError) as exc:  # a broken install: fall back to the name heuristic
        log.warning("model catalogue unreadable (%s): generative-ness from class names only", exc)
        entries = {}
        notes.append(f"model catalogue unavailable ({exc}); generative classes guessed from their names")
    core = settings.core or tuple(catalog.PRESETS.get("core", ()))
    if not core:
        notes.append("no core preset: set [tool.export-bot] core = [...] so shared-code changes run something")
    # Only the zoo's buildable set is known here; `transformers-tests:PATH` builds whatever has a tester.
    buildable = (
        frozenset(n for n, e in entries.items() if e.buildable) if settings.source == "zoo" and entries else None
    )
    generative = {name: e.generative for name, e in entries.items()}
    families = {name: e.family for name, e in entries.items()}
    return Catalog(generative, buildable, tuple(core), tuple(notes), families)
