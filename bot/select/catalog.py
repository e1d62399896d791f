"""What the model source knows about classes: which it can build, which generate, and the `core` preset."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.settings import Settings

log = logging.getLogger(__name__)

# A class without a recipe is treated as generative when its name says it generates text:
# these heads are the ones Transformers' tests list in `all_generative_model_classes`.
GENERATIVE_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")


@dataclass(frozen=True)
class Catalog:
    """Recipes' generative flags and buildable set (None when the source's classes are unknown), and the core preset."""

    generative: dict[str, bool]
    buildable: frozenset[str] | None
    core: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def is_generative(self, model_class: str) -> bool:
        known = self.generative.get(model_class)
        return known if known is not None else model_class.endswith(GENERATIVE_SUFFIXES)

    def unbuildable(self, classes) -> tuple[str, ...]:
        return () if self.buildable is None else tuple(sorted(c for c in classes if c not in self.buildable))


def load_catalog(settings: Settings) -> Catalog:
    """Read the zoo's recipes (importable without torch); `[tool.export-bot] core` overrides its `core` preset."""
    notes = []
    try:
        from bot.run.sources.zoo.recipes import PRESETS, RECIPES
    except ImportError as exc:  # the zoo is optional for selection: fall back to the name heuristic
        log.warning("zoo recipes not importable (%s): generative-ness from class names only", exc)
        recipes, presets = {}, {}
        notes.append(f"zoo recipes unavailable ({exc}); generative classes guessed from their names")
    else:
        recipes, presets = RECIPES, PRESETS
    core = settings.core or tuple(presets.get("core", ()))
    if not core:
        notes.append("no core preset: set [tool.export-bot] core = [...] so shared-code changes run something")
    # Only the zoo's buildable set is known here; `transformers-tests:PATH` builds whatever has a tester.
    buildable = frozenset(recipes) if settings.source == "zoo" and recipes else None
    generative = {name: bool(recipe.generative) for name, recipe in recipes.items()}
    return Catalog(generative, buildable, tuple(core), tuple(notes))
