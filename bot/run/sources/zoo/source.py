"""The `zoo` model source: tiny configs and inputs the bot builds from its recipe table."""

from __future__ import annotations

import copy
import logging

from bot.run.sources.base import BuildError, Built, ClassInfo, NotBuildable
from bot.run.sources.zoo.recipes import PRESETS, RECIPES, Recipe

logger = logging.getLogger(__name__)


class ZooSource:
    """Model classes the bot has a recipe for; `build` imports transformers lazily."""

    spec = "zoo"

    def __init__(self, recipes: dict[str, Recipe] | None = None, presets: dict[str, tuple[str, ...]] | None = None):
        self._recipes = RECIPES if recipes is None else recipes
        self._presets = PRESETS if presets is None else presets

    def classes(self) -> list[ClassInfo]:
        return [
            ClassInfo(name, recipe.model_type, recipe.generative, recipe.family)
            for name, recipe in self._recipes.items()
        ]

    def presets(self) -> dict[str, tuple[str, ...]]:
        return dict(self._presets)

    def build(self, model_class: str, *, generate: bool) -> Built:
        recipe = self._recipes.get(model_class)
        if recipe is None:
            raise NotBuildable(
                f"the zoo has no recipe for {model_class}; add one to bot/run/sources/zoo/recipes.py "
                "or use --source transformers-tests:PATH"
            )
        if generate and not recipe.generative:
            raise BuildError(f"{model_class} is not generative in the zoo: it has no generate inputs")
        import transformers

        from bot.run.sources.zoo import inputs

        cls = getattr(transformers, model_class, None)
        if cls is None:
            raise BuildError(
                f"transformers {transformers.__version__} has no class {model_class} (the zoo recipe is stale)"
            )
        config_type = recipe.config_type or recipe.model_type
        try:
            config = transformers.CONFIG_MAPPING[config_type](**copy.deepcopy(dict(recipe.config)))
        except Exception as exc:  # a config class rejecting a recipe's overrides
            raise BuildError(f"{model_class}: config {config_type!r} rejected the recipe: {exc}") from exc
        try:
            if generate:
                _prepare_generate_config(config)
                batch = inputs.generate_inputs(recipe, config)
            else:
                batch = inputs.forward_inputs(recipe, config)
        except Exception as exc:
            raise BuildError(f"{model_class}: cannot make {recipe.inputs!r} inputs: {exc}") from exc
        return Built(model_class=cls, config=config, inputs=batch)


def _prepare_generate_config(config) -> None:
    """As upstream's GenerationTesterMixin: no eos, so generation never stops early; pad falls back to eos."""
    # Older encoder-decoder configs (BART) hand back a copy as their text config: clear both.
    for part in {id(c): c for c in (config, config.get_text_config(decoder=True))}.values():
        eos = getattr(part, "eos_token_id", None)
        if eos is not None and getattr(part, "pad_token_id", None) is None:
            part.pad_token_id = eos if isinstance(eos, int) else eos[0]
        part.eos_token_id = None
        part.forced_eos_token_id = None
