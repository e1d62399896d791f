"""The model-source contract: what a source lists, and what it builds for one model class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bot.catalog import FAMILIES as FAMILIES  # the families live with the catalogue; sources re-export them
from bot.errors import BotError

PRESET_NAMES = ("smoke", "core", "all")


@dataclass(frozen=True)
class ClassInfo:
    """A model class a source can build, without building it."""

    model_class: str
    model_type: str
    generative: bool
    family: str  # one of FAMILIES


@dataclass(frozen=True)
class Built:
    """One model class made ready for a cell: the class, a fresh config, and its inputs."""

    model_class: type  # the PreTrainedModel subclass
    # A FRESH PretrainedConfig on every build() call, not yet cleaned: the runner mutates it.
    config: Any
    # forward: the tester's inputs after _prepare_for_class(inputs, model_class);
    # generate: prepare_config_and_inputs_for_generate()'s inputs.
    inputs: dict
    exportable: bool = True  # the tester's test_torch_exportable


class SourceError(BotError, ValueError):
    """A bad `--source` spec or an unreadable checkout; the message says what to fix."""


class BuildError(Exception):
    """This source cannot build this model class (unknown class, the tester raised, ...)."""


class NotBuildable(BuildError):
    """This source has no way to build this class at all (no recipe, no tester lists it).

    Not a failure of the class or of the run: the cell is reported as "not buildable by this
    source", with the reason, and never fails the verdict or becomes a skiplist proposal.
    """


class ModelSource(Protocol):
    """Where model classes, their tiny configs and their inputs come from (docs/runner.md)."""

    spec: str

    def classes(self) -> list[ClassInfo]: ...

    def presets(self) -> dict[str, tuple[str, ...]]: ...  # "smoke", "core", "all"

    def build(self, model_class: str, *, generate: bool) -> Built: ...
