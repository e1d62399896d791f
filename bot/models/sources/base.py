"""The model-source contract: what a source lists, and what it builds for one model class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bot.errors import BotError
from bot.models.catalog import FAMILIES as FAMILIES  # the families live with the catalogue; sources re-export them

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


@dataclass(frozen=True)
class Target:
    """What the gates read before anything is built (docs/runner.md step 1).

    `gate_class` is the class whose modeling file the eager-MoE check reads: upstream reads the
    test class's first model class, not necessarily this one.
    """

    model_class: type
    exportable: bool = True  # the tester's test_torch_exportable
    gate_class: type | None = None


class SourceError(BotError, ValueError):
    """A bad `--source` spec or an unreadable checkout; the message says what to fix."""


class BuildError(Exception):
    """This source cannot build this model class (unknown class, the tester raised, ...)."""


class SetupProblem(BuildError):
    """The source's own setup is broken for this class (its test module does not import): one cause for many cells.

    `origin` is the file that raised (a shared helper, often not the test module itself), `module`
    the test module being imported, `details` the original traceback, kept once per module.
    """

    def __init__(self, message: str, *, origin: str, module: str, details: str):
        super().__init__(message)
        self.origin, self.module, self.details = origin, module, details


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


# Optional on a source: `target(model_class, *, generate) -> Target`, so gates run before `build`
# (a tester that raises for a class upstream would skip must give the skip, not an error).
