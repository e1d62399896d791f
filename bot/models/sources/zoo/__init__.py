"""The `zoo` model source: any catalogued Transformers model class, built tiny from its config class (torch lazily)."""

from bot.models.sources.zoo.recipes import OVERRIDES, Override
from bot.models.sources.zoo.source import ZooSource

__all__ = ["OVERRIDES", "Override", "ZooSource"]
