"""The export backends, one declaration each: what every stage reads about a backend (docs/cells.md).

Cell ids, scopes, `--backends` and every report spell a backend by `name`; the seed's test names
by `word` (`test_<word>_export…`). Only the job summary's dense grid abbreviates it, to `label`
(its legend says what a label that is not the name stands for); proposed reasons name it by `exporter`, skiplist documentation by `described`; the
dashboard draws it in `colour` (served to its script as data). The
runner gates it as its tests' decorators do (`requires`, `torch_gated`) and runs it with the
module named `runner` (bot/run/backends/: the same backends seen from the run stage). Runs
record the versions of `versioned` packages. Adding a backend is one declaration here and its
runner module.

Every stage reads the declarations when it uses them, never a copy taken at import: the tables
below (`NAMES`, `BY_NAME`, …) are views that recompute themselves when the declarations change; a
module deriving its own table builds it with `DerivedTuple`, `DerivedDict` or `Derived`, and caches
what depends on them with `cached`. So `register` (or, in a test, `registered`) adds a backend
everywhere at once; tests/test_fake_backend.py shows it. A registration lives in its process only.

The views read as tuples and dicts but are neither: `json` (and anything testing `isinstance(...,
tuple)`) refuses them, so what is written out takes its value first (`list(NAMES)`,
`NAMES.current()`), as the dashboard's data does; no document the bot writes holds a view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache, wraps
from typing import Generic, ParamSpec, TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
P = ParamSpec("P")


@dataclass(frozen=True)
class Backend:
    name: str  # in cell ids and skip scopes: `dynamo`
    word: str  # in the seed's test names: `test_torch_export…`
    label: str  # a column's short label in the job summary's grid (its legend spells out one not its name)
    exporter: str  # in a proposed reason: "Torch export fails …"
    described: str  # in skiplist documentation
    runner: str  # the module that exports and runs it (bot/run/backends/)
    requires: tuple[str, ...] = ()  # its tests' `require_<package>` decorators, as transformers checks them
    torch_gated: bool = True  # its tests carry `require_torch_greater_or_equal(MIN_EXPORT_TORCH_VERSION)`
    versioned: tuple[str, ...] = ()  # packages whose versions a run records
    targets: tuple[tuple[str, str], ...] = ()  # delegates the cell names after the shape: (name, described)
    colour: str = "#57606a"  # its line in the dashboard's pass-rate plot
    # How values-1 compares its outputs with eager's (docs/rules.md); the defaults are a backend that
    # runs its runtime's own kernels and names its outputs, as ONNX and OpenVINO do.
    tolerance: tuple[float, float] = (1e-3, 1e-3)  # float32 (atol, rtol)
    generate_tolerance: tuple[float, float] | None = None  # its generate components', when not `tolerance`
    eager_kernels: bool = False  # it runs eager's own kernels (torch.export): the seed compares plain values
    named_outputs: bool = True  # its outputs carry eager's names; unnamed ones are compared in order
    # The seed's forward test passes the backend's name to the exactness walk (bot/scopes.py);
    # torch.export's passes none, so its forward cells walk the scopes shared by every backend.
    forward_exactness_named: bool = True
    cpu_only: bool = False  # it exports and runs on CPU even where CUDA is available

    @property
    def takes_target(self) -> bool:
        """Its cells name a delegate target after the shape (`targets` declares which)."""
        return bool(self.targets)

    def skip_walk(self, target: str | None) -> tuple[str | None, ...]:
        """The `backend=` values its tests pass to the skip walk, in order: its name, then its target if it takes one."""
        return (self.name, target) if self.takes_target else (self.name,)

    def compares(self, generate: bool) -> str:
        """What the seed's test compares with eager: output "count"s (unnamed outputs), output "names" only
        (a generate cell of a backend with its own kernels) or "values"."""
        if not self.named_outputs:
            return "count"
        return "names" if generate and not self.eager_kernels else "values"


_declared: tuple[Backend, ...] = (
    Backend(
        "dynamo",
        word="torch",
        label="dynamo",
        exporter="Torch",
        described="torch.export (dynamo)",
        runner="bot.run.backends.dynamo",
        colour="#0969da",
        # the same kernels as eager; its generate components 5e-4, the decode's cache arithmetic
        tolerance=(1e-4, 1e-4),
        generate_tolerance=(5e-4, 1e-4),
        eager_kernels=True,
        forward_exactness_named=False,
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
        named_outputs=False,  # a program's outputs are a flat list
        cpu_only=True,  # XNNPACK targets CPU, and tracing on CUDA surfaces per-model device bugs
        # `mlx` exists only where the runtime registers it (the seed's `_EXECUTORCH_BACKENDS`);
        # the grammar accepts it everywhere so ids from such machines parse.
        targets=(("xnnpack", "ExecuTorch XNNPACK target"), ("mlx", "ExecuTorch MLX target")),
    ),
)


def backends() -> tuple[Backend, ...]:
    """The declared backends, in the matrix's order (the order of the grid's columns)."""
    return _declared


def register(backend: Backend) -> None:
    """Add a backend after the declared ones; its name, test word and label must be new."""
    global _declared
    for field in ("name", "word", "label"):
        taken = {getattr(known, field) for known in _declared}
        if getattr(backend, field) in taken:
            raise ValueError(f"a backend's {field} {getattr(backend, field)!r} is already declared")
    _declared = (*_declared, backend)


@contextmanager
def registered(*extra: Backend) -> Iterator[None]:
    """Backends added for the length of a `with` block (a test's), the declarations restored after it."""
    global _declared
    before = _declared
    try:
        for backend in extra:
            register(backend)
        yield
    finally:
        _declared = before


class Derived(Generic[T]):
    """A value computed from the declarations, recomputed when they change (each stage reads it at use)."""

    def __init__(self, compute: Callable[[tuple[Backend, ...]], T]):
        self._compute = compute
        self._source: tuple[Backend, ...] | None = None
        self._value: T | None = None

    def current(self) -> T:
        """The value for the backends declared now."""
        if self._source is not _declared:
            self._value, self._source = self._compute(_declared), _declared
        return self._value  # type: ignore[return-value]


class _Container(Derived[T]):
    """What a derived tuple and a derived table both answer as their current value would."""

    def __getitem__(self, key):  # type: ignore[override]
        return self.current()[key]  # type: ignore[index]

    def __len__(self) -> int:
        return len(self.current())  # type: ignore[arg-type]

    def __iter__(self):
        return iter(self.current())  # type: ignore[call-overload]

    def __contains__(self, value: object) -> bool:
        return value in self.current()  # type: ignore[operator]

    def __repr__(self) -> str:
        return repr(self.current())


class DerivedTuple(_Container[tuple[T, ...]], Sequence[T]):
    """A tuple drawn from the backends, as `NAMES` is: index it, iterate it, test membership, as a tuple."""

    def index(self, value, start: int = 0, stop: int = 2**63) -> int:  # type: ignore[override]
        return self.current().index(value, start, stop)

    def __eq__(self, other: object) -> bool:
        return self.current() == (tuple(other) if isinstance(other, DerivedTuple) else other)

    def __hash__(self) -> int:
        return hash(self.current())


class DerivedDict(_Container[dict[K, V]], Mapping[K, V]):
    """A table drawn from the backends, as `BY_NAME` is: read it as a dict."""


REGISTRY: DerivedTuple[Backend] = DerivedTuple(lambda declared: declared)
BY_NAME: DerivedDict[str, Backend] = DerivedDict(lambda declared: {backend.name: backend for backend in declared})
NAMES: DerivedTuple[str] = DerivedTuple(lambda declared: tuple(backend.name for backend in declared))
TARGETS: DerivedTuple[str] = DerivedTuple(
    lambda declared: tuple(target for backend in declared for target, _ in backend.targets)
)
LABELS: DerivedDict[str, str] = DerivedDict(lambda declared: {backend.name: backend.label for backend in declared})
# The packages whose versions a run records, in this order: transformers and torch, then each backend's.
VERSIONED_PACKAGES: DerivedTuple[str] = DerivedTuple(
    lambda declared: tuple(dict.fromkeys(("transformers", "torch", *(p for b in declared for p in b.versioned))))
)


def cached(maxsize: int) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """`functools.lru_cache` for a function whose answer depends on the backends: emptied when they change."""

    def wrap(function: Callable[P, T]) -> Callable[P, T]:
        remembered = lru_cache(maxsize=maxsize)(function)
        source: list[tuple[Backend, ...]] = [_declared]

        @wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> T:
            if source[0] is not _declared:
                remembered.cache_clear()
                source[0] = _declared
            return remembered(*args, **kwargs)

        return call

    return wrap


def label(name: str) -> str:
    """A backend's column label; a name the bot does not know (a checkout's own test) as it is."""
    found = BY_NAME.get(name)
    return found.label if found is not None else name
