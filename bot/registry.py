"""The export backends, one declaration each: what every stage reads about a backend (docs/cells.md).

Cell ids and scopes spell a backend by `name`; the seed's test names by `word`
(`test_<word>_export…`). The grid, the comment and the job summary label its columns with
`label`, proposed reasons name it by `exporter`, skiplist documentation by `described`; the
dashboard draws it in `colour` (served to its script as data). The
runner gates it as its tests' decorators do (`requires`, `torch_gated`) and runs it with the
module named `runner` (bot/run/backends/: the same backends seen from the run stage). Runs
record the versions of `versioned` packages. Adding a backend is one declaration here and its
runner module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    name: str  # in cell ids and skip scopes: `dynamo`
    word: str  # in the seed's test names: `test_torch_export…`
    label: str  # a column's short label in the grid, the comment and the summary
    exporter: str  # in a proposed reason: "Torch export fails …"
    described: str  # in skiplist documentation
    runner: str  # the module that exports and runs it (bot/run/backends/)
    requires: tuple[str, ...] = ()  # its tests' `require_<package>` decorators, as transformers checks them
    torch_gated: bool = True  # its tests carry `require_torch_greater_or_equal(MIN_EXPORT_TORCH_VERSION)`
    versioned: tuple[str, ...] = ()  # packages whose versions a run records
    targets: tuple[tuple[str, str], ...] = ()  # delegates the cell names after the shape: (name, described)
    colour: str = "#57606a"  # its line in the dashboard's pass-rate plot


REGISTRY: tuple[Backend, ...] = (
    Backend(
        "dynamo",
        word="torch",
        label="torch",
        exporter="Torch",
        described="torch.export (dynamo)",
        runner="bot.run.backends.dynamo",
        colour="#0969da",
    ),
    Backend(
        "onnx",
        word="onnx",
        label="onnx",
        exporter="ONNX",
        described="ONNX",
        runner="bot.run.backends.onnx",
        colour="#cf222e",
        requires=("onnxscript", "onnxruntime"),
        versioned=("onnx", "onnxscript", "onnxruntime"),
    ),
    Backend(
        "openvino",
        word="openvino",
        label="ov",
        exporter="OpenVINO",
        described="OpenVINO",
        runner="bot.run.backends.openvino",
        colour="#8250df",
        requires=("openvino",),
        torch_gated=False,  # upstream's OpenVINO tests carry no torch version gate
        versioned=("openvino",),
    ),
    Backend(
        "executorch",
        word="executorch",
        label="et",
        exporter="ExecuTorch",
        described="ExecuTorch",
        runner="bot.run.backends.executorch",
        colour="#1a7f37",
        requires=("executorch",),
        versioned=("executorch",),
        # `mlx` exists only where the runtime registers it (the seed's `_EXECUTORCH_BACKENDS`);
        # the grammar accepts it everywhere so ids from such machines parse.
        targets=(("xnnpack", "ExecuTorch XNNPACK target"), ("mlx", "ExecuTorch MLX target")),
    ),
)

BY_NAME = {backend.name: backend for backend in REGISTRY}
NAMES = tuple(backend.name for backend in REGISTRY)
TARGETS = tuple(target for backend in REGISTRY for target, _ in backend.targets)
LABELS = {backend.name: backend.label for backend in REGISTRY}
# The packages whose versions a run records, in this order: transformers and torch, then each backend's.
VERSIONED_PACKAGES = tuple(dict.fromkeys(("transformers", "torch", *(p for b in REGISTRY for p in b.versioned))))


def label(name: str) -> str:
    """A backend's column label; a name the bot does not know (a checkout's own test) as it is."""
    found = BY_NAME.get(name)
    return found.label if found is not None else name
