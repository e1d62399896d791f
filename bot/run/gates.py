"""Environment gates (docs/runner.md step 6): cells the seed skips for reasons outside any skiplist."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from packaging.version import Version

from bot.cells import Cell


@dataclass(frozen=True)
class Gate:
    """Why a cell cannot run here: `scope` is the `env:<why>` skip scope, `reason` the seed's text."""

    why: str
    reason: str

    @property
    def scope(self) -> str:
        return f"env:{self.why}"


def torch_gate(installed: str, minimum: str) -> Gate | None:
    """The seed's `require_torch_greater_or_equal(DynamoExporter.min_versions["torch"])`."""
    if Version(installed).release < Version(minimum).release:
        return Gate("torch-too-old", f"torch {installed} is older than {minimum}, the exporters' minimum")
    return None


def has_eager_moe(source_code: str) -> bool:
    """The seed's check: an experts loop without the `use_experts_implementation` switch."""
    return "for expert" in source_code and "use_experts_implementation" not in source_code


def model_gate(cell: Cell, model_class: type, *, exportable: bool) -> Gate | None:
    """The seed's `_skip_if_not_exportable`, then `_should_skip`'s static-cache check, for a built class."""
    if not exportable:
        return Gate("not-exportable", "Model architecture is not Dynamo exportable/traceable")
    # The seed reads the modeling file of the tester's first class: the same file as this class's.
    try:
        with open(inspect.getfile(model_class), encoding="utf-8") as handle:
            source_code = handle.read()
    except (OSError, TypeError):  # a class built in memory (tests) has no file to read
        source_code = ""
    if has_eager_moe(source_code):
        return Gate("eager-moe", "Model architecture uses eager MoE implementation which is not torch exportable")
    if cell.static_cache and not getattr(model_class, "_can_compile_fullgraph", False):
        reason = f"{model_class.__name__} cannot compile fullgraph (`_can_compile_fullgraph`), so has no static cache"
        return Gate("static-cache-unsupported", reason)
    return None
