"""Cells of the export matrix and their JUnit ids (docs/cells.md), in both directions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from bot import registry
from bot.errors import BotError

BACKENDS = registry.NAMES
SHAPES = ("static", "dynamic")
PATHS = ("forward", "generate")
CACHES = ("dynamic", "static")
TARGETS = registry.TARGETS  # ExecuTorch delegates (bot/registry.py)

# The seed's test-function stem per backend: torch.export tests are `test_torch_export*`. Like every
# table drawn from bot/registry.py, these follow the declarations, so a backend registered later is read too.
_FN = registry.DerivedDict(lambda declared: {backend.name: backend.word for backend in declared})
_BACKEND_OF_FN = registry.DerivedDict(lambda declared: {backend.word: backend.name for backend in declared})

# `test_<word>_export[_generate]_<shape>[_<axis words>][_static_cache][_<target>]`: the seed's names, and
# a newer export module's (`…_generate_dynamic_multi_token_static_cache_xnnpack`), whose extra axes come
# before the cache and the target. The words after the shape are read from the end (docs/cells.md).
_NAME = re.compile(
    r"test_(?P<fn>[a-z][a-z0-9]*)_export"
    r"(?P<generate>_generate)?"
    r"_(?P<shape>[a-z0-9]+)"
    r"(?:_(?P<rest>[a-z0-9]+(?:_[a-z0-9]+)*))?"
)
_STATIC_CACHE = ["static", "cache"]

# A test of the checkout's export module that names no backend (`test_precomputed_inputs_match_eager`):
# a cell with its method name kept verbatim. A name with `_export` or a known backend's stem is a
# cell name gone wrong (`test_onnx_forward`), never such a test, so `Cell.parse` refuses it; only a
# test the checkout itself collected (`lenient`) keeps such a name, so no collected test is dropped.
_VERBATIM = re.compile(r"test_[a-z0-9]+(?:_[a-z0-9]+)*")
_NOT_VERBATIM = registry.Derived(
    lambda declared: re.compile(r"test_(?:" + "|".join(backend.word for backend in declared) + r")_|.*_export")
)


class CellIdError(BotError, ValueError):
    """A JUnit id that names no cell of the matrix; the message says which part is wrong."""


@dataclass(frozen=True, order=True)
class Cell:
    """One point of the matrix: a model class exported by one backend under one variant."""

    model_class: str
    backend: str
    shape: str = "static"
    path: str = "forward"
    cache: str | None = None
    target: str | None = None
    # Further axes of the checkout's test name that no field above holds, as written (`multi_token`):
    # the checkout's own export tests judge such a cell (docs/runner.md); "" for every seed cell.
    axes: str = ""
    # The checkout's test method name, kept verbatim, when it names no backend (`backend` and
    # `shape` are then ""): only the checkout's own test can judge it. "" for every other cell.
    test: str = ""

    def __post_init__(self) -> None:
        problem = _validate(self)
        if problem:
            raise CellIdError(problem)

    @property
    def dynamic(self) -> bool:
        return self.shape == "dynamic"

    @property
    def generate(self) -> bool:
        return self.path == "generate"

    @property
    def static_cache(self) -> bool:
        return self.cache == "static"

    # Cached: the reader and the diff ask for ids of 30,000 cells several times each; a frozen
    # dataclass without slots lets cached_property store into the instance dict.
    @cached_property
    def name(self) -> str:
        """The testcase name, following the seed's parameterized test names."""
        if self.test:
            return self.test
        name = f"test_{_FN.get(self.backend, self.backend)}_export"
        if self.generate:
            name += "_generate"
        name += f"_{self.shape}"
        if self.axes:
            name += f"_{self.axes}"
        if self.static_cache:
            name += "_static_cache"
        if self.target:
            name += f"_{self.target}"
        return name

    @cached_property
    def id(self) -> str:
        """`ModelClass::test_name`: the key shared by JUnit classname and name."""
        return f"{self.model_class}::{self.name}"

    def __str__(self) -> str:
        return self.id

    # Equal cells have equal ids, and a str caches its own hash: a set or dict of 30,000 cells
    # then hashes each one once, not a six-field tuple at every lookup.
    def __hash__(self) -> int:
        return hash(self.id)

    @classmethod
    def parse(cls, cell_id: str, *, lenient: bool = False) -> Cell:
        """Read `ModelClass::test_name` (or `classname` and `name` joined by `::`) back into a cell."""
        model_class, sep, name = cell_id.partition("::")
        if not sep:
            raise CellIdError(f"{cell_id!r}: expected `ModelClass::test_name`, found no `::`")
        return cls.from_testcase(model_class, name, lenient=lenient)

    @classmethod
    def from_testcase(cls, classname: str, name: str, *, lenient: bool = False) -> Cell:
        """Build a cell from a JUnit testcase's `classname` and `name`.

        `lenient`: a name the grammar cannot read is kept verbatim even when it looks like a cell name
        gone wrong; for tests a checkout collected (and their JUnit), never for ids a person typed.
        """
        # pytest writes dotted classnames (`tests.models.bert.test_modeling_bert.BertModelTest`);
        # the bot's own runner writes the bare model class. Only the bare form is a cell.
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", classname or ""):
            raise CellIdError(f"{classname!r}: the classname must be a model class name such as `BertModel`")
        verbatim = _VERBATIM.fullmatch(name or "") is not None
        try:
            fields = read_name(name or "")
            if fields is not None:
                return cls(model_class=classname, **fields)
        except CellIdError:
            if not (lenient and verbatim):
                raise
            return cls(model_class=classname, backend="", shape="", test=name)
        if verbatim and (lenient or not _NOT_VERBATIM.current().match(name)):
            return cls(model_class=classname, backend="", shape="", test=name)
        raise CellIdError(
            f"{name!r}: not a cell name; expected `test_<{'|'.join(_FN.values())}>_export"
            f"[_generate]_<static|dynamic>[_<axes>][_static_cache][_<target>]`"
        )


def _takes_target(backend: str) -> bool:
    """Whether the backend's declaration names delegate targets (an unknown backend takes none)."""
    declared = registry.BY_NAME.get(backend)
    return declared is not None and declared.takes_target


def read_name(name: str) -> dict | None:
    """The fields a test name spells, read from the end (target, then cache, then axes); None when it names no backend.

    Raises CellIdError for a name that is a cell name gone wrong (`test_dynamo_export_static`).
    """
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    fn, generate = match["fn"], bool(match["generate"])
    if fn in _BACKENDS_BY_NAME:  # `test_dynamo_export_…`: a backend named, but not by its test stem
        raise CellIdError(f"{name!r}: unknown backend `{fn}` (expected one of {', '.join(_FN.values())})")
    backend = _BACKEND_OF_FN.get(fn, fn)
    words = match["rest"].split("_") if match["rest"] else []
    target = None
    # A targeted backend's names end with their delegate (an unknown one is named in the error);
    # another backend's name ending with one is kept so that the error says a target is not its to have.
    if words and (_takes_target(backend) or words[-1] in TARGETS):
        target = words.pop()
    static_cache = words[-2:] == _STATIC_CACHE
    if static_cache:
        words = words[:-2]
    axes = "_".join(words)
    if static_cache and not generate:
        raise CellIdError(f"{name!r}: `_static_cache` only exists on generate cells")
    if f"_{axes}_".find("_static_cache_") >= 0:
        raise CellIdError(f"{name!r}: `_static_cache` comes after the other axes (and before the target)")
    return {
        "backend": backend,
        "shape": match["shape"],
        "path": "generate" if generate else "forward",
        "cache": ("static" if static_cache else "dynamic") if generate else None,
        "target": target,
        "axes": axes,
    }


# Backend names that are not test stems: `test_dynamo_export_static` is a typo, not a new backend.
_BACKENDS_BY_NAME = registry.DerivedTuple(
    lambda declared: tuple(backend.name for backend in declared if backend.name not in {b.word for b in declared})
)


def _validate(cell: Cell) -> str | None:
    if cell.test or cell.backend == "":
        return _validate_verbatim(cell)
    return _backend_problem(cell) or _path_problem(cell) or _target_problem(cell)


def _backend_problem(cell: Cell) -> str | None:
    """A backend is one of the bot's, or a test's own word that no backend or test stem already claims."""
    if cell.backend in BACKENDS:
        return None
    if (
        not re.fullmatch(r"[a-z][a-z0-9]*", cell.backend)
        or cell.backend in _BACKENDS_BY_NAME
        or cell.backend in _BACKEND_OF_FN
    ):
        return f"unknown backend {cell.backend!r} (expected one of {', '.join(BACKENDS)}, or a test's own word)"
    return None


def _path_problem(cell: Cell) -> str | None:
    """Shape, path and cache: a generate cell has a cache, a forward cell none."""
    if cell.shape not in SHAPES:
        return f"unknown shape {cell.shape!r} (expected static or dynamic)"
    if cell.path not in PATHS:
        return f"unknown path {cell.path!r} (expected forward or generate)"
    if cell.generate and cell.cache not in CACHES:
        return f"a generate cell needs a cache, dynamic or static, not {cell.cache!r}"
    if not cell.generate and cell.cache is not None:
        return "a forward cell has no cache"
    return None


def _target_problem(cell: Cell) -> str | None:
    """Only a backend declaring targets has a target on its cells, and theirs is one of its delegates."""
    if not _takes_target(cell.backend):
        if cell.target is not None:
            targeted = " and ".join(b.exporter for b in registry.REGISTRY if b.takes_target)
            return f"only {targeted} cells have a target, not {cell.backend} (found {cell.target!r})"
        return None
    backend = registry.BY_NAME[cell.backend]
    own = tuple(target for target, _ in backend.targets)
    if cell.target not in own:
        return f"unknown {backend.exporter} target {cell.target!r} (expected one of {', '.join(own)})"
    if cell.target == "mlx" and cell.static_cache:
        # The seed leaves this combination out of EXECUTORCH_GENERATE_EXPORT_PARAMS.
        return "the mlx target has no static-cache generate cell"
    return None


def _validate_verbatim(cell: Cell) -> str | None:
    """A cell kept by its test name alone: the name no grammar reads, and no property it cannot read."""
    if not _VERBATIM.fullmatch(cell.test) or _placeable(cell.test):
        return (
            f"a cell with no backend needs a test name such as `test_precomputed_inputs_match_eager`, not {cell.test!r}"
        )
    if (cell.backend, cell.shape, cell.path, cell.cache, cell.target, cell.axes) != ("", "", "forward", None, None, ""):
        return f"a cell kept by its test name ({cell.test}) has no backend, shape, cache, target or axes"
    return None


def _placeable(name: str) -> bool:
    """A name the grammar reads into a valid cell: such a test is never kept verbatim."""
    try:
        fields = read_name(name)
        if fields is None:
            return False
        Cell("M", **fields)  # validates: a name whose fields make no cell is not placeable
        return True
    except CellIdError:
        return False


def unread(cell: Cell) -> bool:
    """A collected test kept by its name although it looks like an export cell: the grammar could not read it."""
    return bool(cell.test) and bool(_NOT_VERBATIM.current().match(cell.test))


def placed(cell: Cell) -> bool:
    """A cell on one of the bot's own backends: the seed's rules, the counts table and the grid know it."""
    return cell.backend in BACKENDS


def kept_by(cell: Cell, backends: Iterable[str], shapes: Iterable[str]) -> bool:
    """Whether `--backends` / `--shapes` keep the cell; one on no backend (or shape) of the bot's is kept unless narrowed."""
    backends, shapes = tuple(backends), tuple(shapes)
    backend_ok = cell.backend in backends if placed(cell) else set(BACKENDS) <= set(backends)
    return backend_ok and (cell.shape in shapes if cell.shape else set(SHAPES) <= set(shapes))


def cells_for(
    model_class: str,
    *,
    generative: bool,
    backends: Iterable[str] = BACKENDS,
    shapes: Iterable[str] = SHAPES,
    targets: Iterable[str] = ("xnnpack",),
    forward: bool = True,
) -> Iterator[Cell]:
    """Every cell of one model class's row, in the seed's order (forward first, then generate)."""
    backends, shapes, targets = tuple(backends), tuple(shapes), tuple(targets)
    paths = (("forward",) if forward else ()) + (("generate",) if generative else ())
    for path in paths:
        caches = CACHES if path == "generate" else (None,)
        for backend in backends:
            for target in targets if _takes_target(backend) else (None,):
                for shape in shapes:
                    for cache in caches:
                        if target == "mlx" and cache == "static":
                            continue
                        yield Cell(model_class, backend, shape, path, cache, target)
