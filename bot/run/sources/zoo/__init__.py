"""The `zoo` model source: tiny recipes (`recipes.py`, plain data) and their builder (torch, lazily)."""

from bot.run.sources.zoo.recipes import PRESETS, RECIPES, Recipe
from bot.run.sources.zoo.source import ZooSource

__all__ = ["PRESETS", "RECIPES", "Recipe", "ZooSource"]
