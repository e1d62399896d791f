"""Recording each cell's footprint (docs/selection.md, "Footprints"): the one module behind the instrumentation.

Not a tracer: on Python 3.11 any trace or profile function (`sys.settrace`, coverage.py's C tracer)
puts the interpreter on its slow path for all code, torch's included, and a cell then took 1.6 to
2.2 times as long (`benchmarks/footprint.py` measures the recording actually used). Instead the
checkout's own modules are compiled, as they are imported, with one call at the top of each function
body and of the module, `__export_bot_hit__(N)`: the `add` of one set. The rest of the process runs at
full speed, and a function of the checkout costs one C call more. Dynamo traces that call as a set
mutation (fullgraph and strict export included), so code a compiler traces is recorded too; the
source files, line numbers and tracebacks are the checkout's, and nothing is written to `__pycache__`.

A cell's footprint is what ran while it ran, plus what ran while each module it used was imported
(decorators, registries: import-time code the cell depends on, whichever cell happened to import it
first in the worker).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
from collections.abc import Iterable
from pathlib import Path

from bot.footprints import MODULE, function, named_functions

logger = logging.getLogger(__name__)

HIT = "__export_bot_hit__"  # the global each instrumented module calls
PACKAGE_PREFIX = "src/transformers"  # the package as a Transformers checkout lays it out


class Recorder:
    """The functions of the watched folders that ran, per cell; one per process, installed before transformers is imported."""

    def __init__(self, roots: Iterable[tuple[Path, str]]):
        # (folder, the name its files are recorded under: `src/transformers`, `tests`)
        self.roots = tuple((Path(folder).resolve(), prefix) for folder, prefix in roots)
        self.names: list[str] = []  # hit id → `PATH::QUALNAME`
        self.files: list[str] = []  # hit id → PATH
        self.hits: set[int] = set()  # the one set every instrumented module adds to
        self.imports: dict[str, frozenset[int]] = {}  # PATH → what ran while it was imported
        self._finder = _Finder(self)

    def install(self) -> None:
        if self._finder not in sys.meta_path:
            sys.meta_path.insert(0, self._finder)
        loaded = [name for name in ("transformers", "tests") if name in sys.modules]
        if loaded:
            logger.warning("footprints: %s imported before the recorder: what it loaded is not recorded", loaded[0])

    def uninstall(self) -> None:
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)

    def start(self) -> None:
        """A cell starts: what ran so far (imports, earlier cells) is not its."""
        self.hits.clear()

    def stop(self) -> frozenset[str]:
        """The cell's footprint: what ran since `start`, and what ran importing each file it used."""
        ran = set(self.hits)
        files: set[str] = set()
        while True:  # the import-time code of each file used, and of the files that adds
            new = {self.files[i] for i in ran} - files
            if not new:
                break
            files |= new
            for path in new:
                ran |= self.imports.get(path, frozenset())
        return frozenset(self.names[i] for i in ran)

    def name_of(self, origin: str) -> str | None:
        """The recorded path of a source file under a watched folder, else None."""
        try:
            resolved = Path(origin).resolve()
        except OSError:
            return None
        for folder, prefix in self.roots:
            if resolved.is_relative_to(folder):
                return f"{prefix}/{resolved.relative_to(folder).as_posix()}"
        return None

    def instrument(self, source: bytes, origin: str, path: str):
        """The module's code with a hit at the top of the module and of each function body."""
        tree = ast.parse(source, filename=origin)
        for node, qualname in named_functions(tree):
            at = _after_docstring(node.body)
            node.body.insert(at, self._hit(path, qualname, node.body[min(at, len(node.body) - 1)].lineno))
        at = _after_docstring(tree.body)
        while at < len(tree.body) and _is_future(tree.body[at]):
            at += 1
        if tree.body:
            tree.body.insert(at, self._hit(path, MODULE, tree.body[min(at, len(tree.body) - 1)].lineno))
        return compile(tree, origin, "exec", dont_inherit=True)

    def _hit(self, path: str, qualname: str, line: int) -> ast.stmt:
        index = len(self.names)
        self.names.append(function(path, qualname))
        self.files.append(path)
        call = ast.Expr(ast.Call(ast.Name(HIT, ast.Load()), [ast.Constant(index)], []))
        for node in ast.walk(call):  # on the body's first line: tracebacks and line tables stay the checkout's
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0
        return call

    def execute(self, loader: importlib.machinery.SourceFileLoader, module, path: str) -> None:
        """Run a module's body, keeping apart what ran while it was imported (nested imports included)."""
        module.__dict__[HIT] = self.hits.add
        outer = set(self.hits)
        self.hits.clear()
        try:
            importlib.machinery.SourceFileLoader.exec_module(loader, module)
        finally:
            self.imports[path] = self.imports.get(path, frozenset()) | self.hits
            self.hits |= outer


def _after_docstring(body: list[ast.stmt]) -> int:
    """Where the hit goes: after the docstring, which must stay first to stay `__doc__` (auto_docstring reads it)."""
    first = body[0] if body else None
    docstring = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    return 1 if docstring else 0


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


class _Loader(importlib.machinery.SourceFileLoader):
    """A source loader that compiles the instrumented module, never from or into `__pycache__`."""

    def __init__(self, fullname: str, origin: str, recorder: Recorder, path: str):
        super().__init__(fullname, origin)
        self.recorder, self.recorded = recorder, path

    def get_code(self, fullname):
        origin = self.get_filename(fullname)
        return self.recorder.instrument(self.get_data(origin), origin, self.recorded)

    def exec_module(self, module) -> None:
        self.recorder.execute(self, module, self.recorded)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds modules as Python would, and loads those under a watched folder with `_Loader`."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def find_spec(self, fullname, path, target=None):
        spec = self._others(fullname, path, target)
        if spec is None or not spec.origin or not spec.origin.endswith(".py") or not spec.has_location:
            return None
        recorded = self.recorder.name_of(spec.origin)
        if recorded is None:
            return None
        spec.loader = _Loader(fullname, spec.origin, self.recorder, recorded)
        return spec

    def _others(self, fullname, path, target):
        """The spec the finders after this one give (an editable install's own finder among them)."""
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None


def roots_for(source: str) -> list[tuple[Path, str]]:
    """What a run watches: the transformers package Python would import, and the checkout's tests for a tests source."""
    roots = []
    spec = importlib.util.find_spec("transformers")  # finds the package without importing it
    if spec is not None and spec.origin:
        roots.append((Path(spec.origin).parent, PACKAGE_PREFIX))
    prefix = "transformers-tests:"
    if source.startswith(prefix):
        roots.append((Path(source[len(prefix) :]).expanduser() / "tests", "tests"))
    return roots
