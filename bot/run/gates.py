"""Environment gates (docs/runner.md step 1): cells the upstream test skips for reasons outside any skiplist."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from bot import registry
from bot.cells import Cell


@dataclass(frozen=True)
class Gate:
    """Why a cell cannot run here: `scope` is the `env:<why>` skip scope, `reason` the upstream test's text."""

    why: str
    reason: str

    @property
    def scope(self) -> str:
        return f"env:{self.why}"


# The upstream tests carry `require_torch_greater_or_equal(MIN_EXPORT_TORCH_VERSION)` on the
# torch.export, ONNX and ExecuTorch tests; the OpenVINO tests do not.
TORCH_GATED_BACKENDS = registry.DerivedTuple(
    lambda declared: tuple(backend.name for backend in declared if backend.torch_gated)
)

# The `require_<package>` decorators of each backend's tests, as transformers' availability checks.
BACKEND_PACKAGES = registry.DerivedDict(lambda declared: {backend.name: backend.requires for backend in declared})


def torch_gate(installed: str, minimum: str, backend: str | None = None) -> Gate | None:
    """`require_torch_greater_or_equal(minimum)`: `version.parse(installed) >= version.parse(minimum)`.

    A pre-release or dev build of the minimum (`2.11.0a0`, `2.11.0.dev…`) sorts below it and is
    skipped, as upstream's check does (it accepts dev builds only when asked to, and the export
    tests do not ask). OpenVINO cells are never gated.
    """
    if backend is not None and backend not in TORCH_GATED_BACKENDS:
        return None
    try:
        old = Version(installed) < Version(minimum)
    except InvalidVersion:
        old = True  # upstream's `version.parse` raises here too: the test never runs
    if old:
        return Gate("torch-too-old", f"torch {installed} is older than {minimum}, the exporters' minimum")
    return None


def backend_gate(backend: str, available: Callable[[str], bool]) -> Gate | None:
    """The backend tests' `require_onnxscript` / `require_onnxruntime` / `require_openvino` / `require_executorch`.

    `available(package)` answers as transformers' `is_<package>_available` does; a missing package
    skips the cell with the reason, as upstream's decorators do, instead of failing its export.
    """
    for package in BACKEND_PACKAGES.get(backend, ()):
        if not available(package):
            return Gate("backend-missing", f"test requires {package}, which is not installed")
    return None


def has_eager_moe(source_code: str) -> bool:
    """The upstream check: an experts loop without the `use_experts_implementation` switch."""
    return "for expert" in source_code and "use_experts_implementation" not in source_code


def read_source(model_class: type) -> str:
    """The text of the file that defines `model_class` ("" for a class built in memory, as in tests)."""
    try:
        with open(inspect.getfile(model_class), encoding="utf-8") as handle:
            return handle.read()
    except (OSError, TypeError):
        return ""


def model_gate(cell: Cell, model_class: type, *, exportable: bool, gate_class: type | None = None) -> Gate | None:
    """`_skip_if_not_exportable`, then `_should_skip`'s static-cache check; decided before anything is built.

    Upstream reads the modeling file of the test class's *first* model class (`gate_class`), which
    for a test class listing classes of one modeling module is this class's file too.
    """
    if not exportable:
        return Gate("not-exportable", "Model architecture is not Dynamo exportable/traceable")
    if has_eager_moe(read_source(gate_class or model_class)):
        return Gate("eager-moe", "Model architecture uses eager MoE implementation which is not torch exportable")
    if cell.static_cache and not getattr(model_class, "_can_compile_fullgraph", False):
        reason = f"{model_class.__name__} cannot compile fullgraph (`_can_compile_fullgraph`), so has no static cache"
        return Gate("static-cache-unsupported", reason)
    return None
