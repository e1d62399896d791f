"""From the files a change reaches through the import graph to model types; the sample a change reaching most runs.

Pure: the graph's reach (bot/select/imports.py) in, model types and chains out; the sample is
chosen from the catalogue and a cost per class (docs/selection.md, "The import graph", "The sample").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from bot.select.catalog import Catalog
from bot.select.tree import MODELS_DIR, model_type_of

# A model's own tests: `tests/models/<type>/test_modeling_<type>.py` and its neighbours judge that type.
TESTS_MODELS_DIR = "tests/models"

# More reached classes than this and the PR runs a sample. On Transformers 5.23.0 the files
# outside a model folder split in two: 1,276 reach at most 74 classes (a tester, a tokenizer
# base, the audio feature extractor), 184 reach nearly all 1,712 (everything modeling_utils.py
# imports, at any depth), and only five fall between (deprecation, vision and image processing: 153 to 237). 100 keeps a
# family's worth of classes whole and samples every change of the second kind.
SAMPLE_ABOVE = 100
# The sample's cost bound, in estimated CPU minutes: one shard job at the conformance workflow's
# default `shard-minutes` (40) with the runner's two workers, so a sampled PR takes the wall time
# of a one-model PR. The core preset costs 47.5 of them; one class a family fills the rest.
SAMPLE_BUDGET_MINUTES = 80.0


def reached_type(path: str, models_dir: str = MODELS_DIR) -> str | None:
    """The model type a reached file speaks for: a modeling/modular/configuration module, or a file of its tests folder."""
    found = model_type_of(path, models_dir)
    if found:
        return found
    parts = path.split("/")
    prefix = TESTS_MODELS_DIR.split("/")
    if len(parts) == len(prefix) + 2 and parts[: len(prefix)] == prefix and path.endswith(".py"):
        return parts[len(prefix)]
    return None


def reached_types(reached: Mapping[str, tuple[str, ...]], models_dir: str = MODELS_DIR) -> dict[str, tuple[str, ...]]:
    """model type → the chain of its nearest reached file (shortest, then by path)."""
    found: dict[str, tuple[str, ...]] = {}
    for path, chain in sorted(reached.items(), key=lambda item: (len(item[1]), item[0])):
        model_type = reached_type(path, models_dir)
        if model_type and model_type not in found:
            found[model_type] = chain
    return found


def describe(chain: tuple[str, ...]) -> str:
    """`models/bert/modeling_bert.py imports modeling_layers.py`: the chain, library paths from the package."""
    return " imports ".join(path.removeprefix("src/transformers/") for path in chain)


def choose_sample(
    reached: Mapping[str, str], catalog: Catalog, seconds: Callable[[str], float] | None = None
) -> tuple[tuple[str, ...], float]:
    """The classes a PR reaching `reached` (class → type) runs, and their estimated CPU minutes.

    In order: the catalogue's core classes the change reaches, then, family by family (most
    reached classes first), one class of the family's type with the most reached classes that the
    sample has no class of yet: its shortest-named class, the base model as a rule. A class is
    kept while the estimated cost (`seconds` per class; none known: free) fits SAMPLE_BUDGET_MINUTES.
    """
    candidates = [c for c in catalog.core if c in reached]
    families: dict[str, dict[str, list[str]]] = {}
    for model_class, model_type in sorted(reached.items()):
        if catalog.buildable is None or model_class in catalog.buildable:
            family = catalog.families.get(model_class, "other")
            families.setdefault(family, {}).setdefault(model_type, []).append(model_class)
    have = {reached[c] for c in candidates}
    for _, types in sorted(families.items(), key=lambda item: (-sum(map(len, item[1].values())), item[0])):
        fresh = {t: classes for t, classes in types.items() if t not in have}
        if fresh:
            model_type = min(fresh, key=lambda t: (-len(fresh[t]), t))
            candidates.append(min(fresh[model_type], key=lambda c: (len(c), c)))
            have.add(model_type)
    return _within_budget(candidates, seconds)


def _within_budget(candidates: Iterable[str], seconds: Callable[[str], float] | None) -> tuple[tuple[str, ...], float]:
    picked, spent = [], 0.0
    for model_class in dict.fromkeys(candidates):
        cost = seconds(model_class) / 60 if seconds else 0.0
        if spent + cost <= SAMPLE_BUDGET_MINUTES:
            picked.append(model_class)
            spent += cost
    return tuple(picked), spent
