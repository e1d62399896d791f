"""The `zoo` model source: every catalogued model class of the installed Transformers, built tiny from its config class."""

from __future__ import annotations

import logging
from functools import lru_cache

from bot.models.catalog import PRESETS, CatalogEntry, Catalogue, generate, load
from bot.models.sources.base import BuildError, Built, ClassInfo, NotBuildable

logger = logging.getLogger(__name__)


class ZooSource:
    """Lists the catalogue's buildable classes; `build` imports torch and transformers lazily."""

    spec = "zoo"

    def __init__(self, catalogue: Catalogue | None = None):
        self._catalogue = catalogue

    @property
    def catalogue(self) -> Catalogue:
        if self._catalogue is None:
            self._catalogue = load()
        return self._catalogue

    def classes(self) -> list[ClassInfo]:
        return [
            ClassInfo(e.model_class, e.model_type, e.generative, e.family)
            for e in self.catalogue.entries.values()
            if e.buildable
        ]

    def presets(self) -> dict[str, tuple[str, ...]]:
        return {**PRESETS, "all": self.catalogue.buildable()}

    def build(self, model_class: str, *, generate: bool) -> Built:
        from bot.models.sources.zoo.build import (
            forward_inputs,
            generate_inputs,
            model_class_of,
            prepare_generate_config,
            seed_weights,
            tiny_config,
        )
        from bot.models.sources.zoo.recipes import override_for

        # The shipped catalogue, else the installed Transformers' own (a PR that adds a model type
        # has classes the shipped file has never seen), else the class's own config class.
        entry = self.catalogue.get(model_class) or _installed().get(model_class) or _from_config_class(model_class)
        if generate and not entry.generative:
            raise BuildError(f"{model_class} is not generative: it has no generate inputs")
        cls = model_class_of(model_class)
        override = override_for(model_class, entry.model_type)
        config = tiny_config(cls, override).config
        try:
            if generate:
                prepare_generate_config(config)
                batch = generate_inputs(cls, config, entry, override)
            else:
                batch = forward_inputs(cls, config, entry, override)
        except BuildError:
            raise
        except Exception as exc:
            raise BuildError(f"{model_class}: cannot make inputs: {type(exc).__name__}: {exc}") from exc
        seed_weights()
        return Built(model_class=cls, config=config, inputs=batch)


@lru_cache(maxsize=1)
def _installed() -> dict[str, CatalogEntry]:
    return dict(generate().entries)


def _from_config_class(model_class: str) -> CatalogEntry:
    """An entry for a model class the catalogue could not place: the model type of its `config_class`.

    The catalogue finds an unmapped class's config in its modeling module's text; this reads the
    imported class instead, for a config declared in a way that text reading misses. An abstract
    base (its `forward` is torch's own, which raises) has nothing to build.
    """
    import torch
    import transformers

    from bot.models.catalog import GENERATIVE_SUFFIXES

    cls = getattr(transformers, model_class, None)
    config_class = getattr(cls, "config_class", None)
    model_type = getattr(config_class, "model_type", None)
    if not isinstance(cls, type) or not issubclass(cls, transformers.PreTrainedModel) or not model_type:
        raise NotBuildable(
            f"{model_class} is not in any auto mapping of the installed transformers and names no config class "
            "with a model type; use --source transformers-tests:PATH"
        )
    if cls.forward is torch.nn.Module.forward:
        raise NotBuildable(f"{model_class} is an abstract base: it defines no forward")
    logger.info("%s: in no auto mapping, built from its config class %s", model_class, config_class.__name__)
    return CatalogEntry(model_class, model_type, "other", model_class.endswith(GENERATIVE_SUFFIXES), ())
