"""The four export backends, each behind its own module, loaded lazily so one missing runtime spares the others."""

from __future__ import annotations

import importlib
from types import ModuleType

from bot import registry

# Each module defines `export(model, inputs, *, dynamic, target, optimize) -> program` (the raw
# program `export_program` returns) and `run(program, inputs) -> outputs` (a `{name: tensor}`
# dict, or a list for ExecuTorch, which compares counts only).
MODULES = registry.DerivedDict(lambda declared: {backend.name: backend.runner for backend in declared})


class RuntimeLimit(Exception):
    """The export is valid but the backend's runtime cannot service it (the seed skips, not fails).

    `why` becomes the cell's `env:<why>` skip scope.
    """

    def __init__(self, why: str, message: str):
        super().__init__(message)
        self.why = why


def load_backend(name: str) -> ModuleType:
    """The backend module for `name`; importing it imports that backend's runtime."""
    try:
        return importlib.import_module(MODULES[name])
    except KeyError:
        raise ValueError(f"unknown backend {name!r} (expected one of {', '.join(MODULES)})") from None
