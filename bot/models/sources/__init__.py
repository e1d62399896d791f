"""Model sources (docs/runner.md): `zoo` (the bot's tiny recipes) and `transformers-tests:PATH`.

Importing this package does not import torch or transformers; `build` does, lazily.
"""

from __future__ import annotations

from bot.models.sources.base import (
    FAMILIES,
    PRESET_NAMES,
    BuildError,
    Built,
    ClassInfo,
    ModelSource,
    NotBuildable,
    SourceError,
)

DEFAULT_SOURCE = "zoo"
_TESTS_PREFIX = "transformers-tests:"

__all__ = [
    "DEFAULT_SOURCE",
    "FAMILIES",
    "PRESET_NAMES",
    "Built",
    "BuildError",
    "ClassInfo",
    "ModelSource",
    "NotBuildable",
    "SourceError",
    "get_source",
]


def get_source(spec: str = DEFAULT_SOURCE) -> ModelSource:
    """The model source named by a `--source` spec: `zoo` or `transformers-tests:PATH`."""
    spec = spec.strip()
    if spec == "zoo":
        from bot.models.sources.zoo import ZooSource

        return ZooSource()
    if spec.startswith(_TESTS_PREFIX):
        path = spec[len(_TESTS_PREFIX) :]
        if not path:
            raise SourceError(
                f"--source {spec!r}: give the Transformers checkout after the colon, "
                "e.g. transformers-tests:/path/to/transformers"
            )
        from bot.models.sources.transformers_tests import TransformersTestsSource

        return TransformersTestsSource(path)
    raise SourceError(
        f"--source {spec!r}: unknown model source; use 'zoo' or 'transformers-tests:PATH' "
        "(PATH = a Transformers source checkout holding tests/models/*/test_modeling_*.py)"
    )
