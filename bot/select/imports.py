"""The checkout's import graph, src and tests alike, built as Transformers' `utils/tests_fetcher.py` builds its own.

Who imports which file of the checkout, each import resolved to the module that defines the
imported name: `from transformers import BertModel` is an edge to `modeling_bert.py`, `from ..utils
import logging` one to `utils/logging.py`, never one to a package's `__init__.py` that merely
re-exports the name. Lazy inits (`define_import_structure`, `_import_structure`, the star imports
of their `TYPE_CHECKING` branch) are read to find where a name lives; a reached `__init__.py` is
not followed further, so the package init that imports every module does not make every file
reach everything (docs/selection.md, "The import graph").
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from bot.select.tree import is_type_checking

# The folders whose Python files make the graph: the library and its tests.
ROOTS = ("src/", "tests/")
# Upstream's fetcher leaves out the checkpoint conversion scripts: nothing imports them and
# they are a tenth of the bytes.
_CONVERT = re.compile(r"/models/[^/]+/convert_[^/]*\.py$")

# Files without `TYPE_CHECKING` are screened instead of parsed whole: the import statements are
# cut out (docstrings dropped first, as upstream's fetcher drops them, so an example in one is
# no import) and only they go through the AST. Parsing all 50 MB whole takes ten times as long.
_STATEMENT = re.compile(
    r"\n[ \t]*(from[ \t]+[.\w]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)|import[ \t]+[^\n]*(?:\\\n[^\n]*)*)"
)
# Both start at a newline rather than `^` under re.M: a literal first character is searched for
# fast, which makes the screen of the real tree three times quicker.
_TYPING = re.compile(r"\n([ \t]*)if[ \t]+(?:typing\.)?TYPE_CHECKING[ \t]*:[^\n]*")
_ALL = re.compile(r"\n__all__[ \t]*\+?=[ \t]*(\[[^\]]*\]|\([^)]*\))")


@dataclass(frozen=True)
class Import:
    """One import: the absolute module it names and the names taken from it (None for `import a.b`)."""

    module: str
    names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Parsed:
    """What the graph needs of one file: its imports at run time and, for a package, what it re-exports."""

    runtime: tuple[Import, ...] = ()
    every: tuple[Import, ...] = ()  # TYPE_CHECKING too: an init's typing branch mirrors its lazy structure
    exports: tuple[str, ...] = ()  # `__all__`
    structure: tuple[tuple[str, tuple[str, ...]], ...] = ()  # an init's `_import_structure`: submodule → names
    scans: tuple[str, ...] = ()  # folders an init hands to `define_import_structure`: "" its own, else a subpackage


@dataclass(frozen=True)
class ImportGraph:
    """path → the checkout's files it imports when it runs (TYPE_CHECKING imports are not edges)."""

    imports: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @cached_property
    def importers(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, list[str]] = {}
        for path, targets in self.imports.items():
            for target in targets:
                found.setdefault(target, []).append(path)
        return {target: tuple(sorted(paths)) for target, paths in found.items()}

    def reached_by(self, changed: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Every file a change to `changed` reaches → its chain: itself, what it imports, …, the changed file.

        Breadth first, so each chain is a shortest one (ties by path). A changed file reaches
        itself. A reached `__init__.py` is not followed: who imports a package init imports names
        the init itself defines (the graph resolves every re-exported name past it), and a change
        the init merely imports does not change those.
        """
        found = {path: (path,) for path in sorted(set(changed))}
        queue = deque(found)
        while queue:
            path = queue.popleft()
            if len(found[path]) > 1 and is_init(path):
                continue
            for importer in self.importers.get(path, ()):
                if importer not in found:
                    found[importer] = (importer, *found[path])
                    queue.append(importer)
        return found


def is_init(path: str) -> bool:
    return path == "__init__.py" or path.endswith("/__init__.py")


def module_name(path: str) -> str:
    """`src/transformers/models/bert/modeling_bert.py` → `transformers.models.bert.modeling_bert`; an init: its package."""
    name = path.removeprefix("src/").removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def graph_paths(paths: Iterable[str]) -> list[str]:
    """The files of a listing the graph reads: Python under src/ and tests/, conversion scripts left out."""
    return sorted(p for p in paths if p.endswith(".py") and p.startswith(ROOTS) and not _CONVERT.search(p))


def read_graph(
    list_blobs: Callable[[], Mapping[str, str]], read_blobs: Callable[[Mapping[str, str]], dict[str, str]]
) -> ImportGraph:
    """The graph at one ref through the readers given: one listing of the tree (path → blob id), one batch read."""
    blobs = list_blobs()
    return build_graph(read_blobs({path: blobs[path] for path in graph_paths(blobs)}))


def build_graph(texts: Mapping[str, str]) -> ImportGraph:
    """The graph of the files given (path → source); imports of anything outside them are left out."""
    parsed = {path: parse_file(path, text) for path, text in texts.items()}
    resolver = _Resolver({module_name(p): p for p in parsed}, parsed)
    edges = {path: frozenset(resolver.targets(path)) - {path} for path in sorted(parsed)}
    return ImportGraph({path: targets for path, targets in edges.items() if targets})


def parse_file(path: str, text: str) -> Parsed:
    """The imports and exports of one file: a package init parsed whole, any other file screened.

    The screen cuts the import statements out and parses only them; one inside an
    `if TYPE_CHECKING:` block (up to the next line indented no deeper than its `if`) is no edge.
    """
    package = _package(path)
    if is_init(path):
        try:
            return _parse_tree(ast.parse(text), package)
        except (SyntaxError, ValueError):
            pass  # an init that does not parse cannot run either: its import lines are the best guess
    body = "\n" + "".join(text.split('"""')[::2])
    spans = _typing_spans(body) if "TYPE_CHECKING" in body else ()
    runtime: list[str] = []
    typing: list[str] = []
    for match in _STATEMENT.finditer(body):
        inside = any(start <= match.start() < end for start, end in spans)
        (typing if inside else runtime).append(_dedent(match.group(1)))
    imports = tuple(i for s in _parse_statements(runtime) for i in _imports_of(s, package))
    hinted = tuple(i for s in _parse_statements(typing) for i in _imports_of(s, package))
    exports = tuple(name for m in _ALL.finditer("\n" + text) for name in _literal_names(m.group(1)))
    return Parsed(imports, imports + hinted, exports)


def _typing_spans(body: str) -> list[tuple[int, int]]:
    """Where the `if TYPE_CHECKING:` blocks of a source run: from the header to the next line indented no deeper."""
    spans = []
    for header in _TYPING.finditer(body):
        depth = len(header.group(1).expandtabs())
        end = re.compile(rf"\n[ \t]{{0,{depth}}}(?=[^ \t\n#])").search(body, header.end())
        spans.append((header.end(), end.start() if end else len(body)))
    return spans


def _package(path: str) -> list[str]:
    name = module_name(path).split(".")
    return name if is_init(path) else name[:-1]


def _dedent(statement: str) -> str:
    return "\n".join(line.strip() for line in statement.splitlines())


def _parse_statements(statements: list[str]) -> list[ast.stmt]:
    try:
        return ast.parse("\n".join(statements)).body
    except SyntaxError:  # one odd match (an import-like line in a string): parse them one by one
        found = []
        for statement in statements:
            try:
                found += ast.parse(statement).body
            except SyntaxError:
                continue
        return found


def _imports_of(node: ast.AST, package: list[str]) -> list[Import]:
    if isinstance(node, ast.Import):
        return [Import(alias.name) for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            if node.level - 1 > len(package):
                return []
            base = package[: len(package) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        return [Import(module, tuple(alias.name for alias in node.names))]
    return []


def _parse_tree(tree: ast.Module, package: list[str]) -> Parsed:
    """An init, whole: its imports (run time and typing) and how it builds its lazy structure."""
    runtime: list[Import] = []
    every: list[Import] = []

    # Statements only: no expression holds an import, and walking every node costs seconds on the tree.
    def visit(nodes: Iterable[ast.AST], typing: bool) -> None:
        for node in nodes:
            found = _imports_of(node, package)
            every.extend(found)
            runtime.extend(() if typing else found)
            if isinstance(node, ast.If) and is_type_checking(node.test):
                visit(node.body, True)
                visit(node.orelse, typing)
            elif not found:
                for name in _BLOCKS:
                    visit(getattr(node, name, ()), typing)

    visit(tree.body, False)
    exports: list[str] = []
    structure: list[tuple[str, tuple[str, ...]]] = []
    scans: list[str] = []
    for node in ast.walk(tree):
        _init_structure(node, exports, structure, scans)
    return Parsed(tuple(runtime), tuple(every), tuple(exports), tuple(structure), tuple(scans))


# The fields of compound statements that hold statements (an `except` clause's `handlers`, a match's `cases`).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _init_structure(node: ast.AST, exports: list[str], structure: list, scans: list[str]) -> None:
    """`__all__`, `_import_structure` entries and `define_import_structure(...)` calls, wherever they sit."""
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "__all__":
                exports.extend(_literal_names(node.value))
            elif isinstance(target, ast.Name) and target.id == "_import_structure" and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        structure.append((key.value, _literal_names(value)))
            elif _structure_key(target):
                structure.append((_structure_key(target), _literal_names(node.value)))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("extend", "append"):
        key = _structure_key(node.func.value)
        if key and node.args:
            names = _literal_names(node.args[0]) if node.func.attr == "extend" else _literal_names(ast.List(node.args))
            structure.append((key, names))
    elif (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) == "define_import_structure"
    ):
        prefix = next((k.value for k in node.keywords if k.arg == "prefix"), None)
        scans.append(prefix.value if isinstance(prefix, ast.Constant) and isinstance(prefix.value, str) else "")


def _structure_key(node: ast.AST) -> str | None:
    """`_import_structure["x.y"]` → `x.y`."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == "_import_structure"
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return node.slice.value
    return None


def _literal_names(node: ast.AST | str) -> tuple[str, ...]:
    """The strings of a list or tuple literal (given as a node or as source); anything computed gives none."""
    if isinstance(node, str):
        try:
            node = ast.parse(node, mode="eval").body
        except SyntaxError:
            return ()
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


class _Resolver:
    """Resolves imports to files: a module to its file, a name taken from a package to the module defining it.

    Each init's table says, one level down, where it takes each name from; a name is followed
    through the tables only when asked for, so the order files are read in never changes an answer
    (utils/__init__.py takes `__version__` from the top-level init, which takes most of its names
    from utils: resolving whole tables eagerly would go round that circle).
    """

    def __init__(self, modules: Mapping[str, str], parsed: Mapping[str, Parsed]) -> None:
        self.modules = modules
        self.parsed = parsed
        self.children: dict[str, list[str]] = {}
        for name in sorted(modules):
            self.children.setdefault(name.rpartition(".")[0], []).append(name)
        self._tables: dict[str, dict[str, str]] = {}

    def targets(self, path: str) -> set[str]:
        found: set[str] = set()
        for imported in self.parsed[path].runtime:
            target = self.modules.get(imported.module)
            if target is None:
                continue  # outside the checkout (torch), or a module it lacks
            if imported.names is None or not is_init(target):
                found.add(target)
                continue
            found.update(self.modules.get(self.owner(imported.module, name), target) for name in imported.names)
        return found

    def owner(self, module: str, name: str) -> str:
        """The module that defines `name` as `from module import name` sees it (the package when its init does)."""
        seen: set[str] = set()
        while module not in seen:
            seen.add(module)
            path = self.modules.get(module)
            if path is None or not is_init(path) or name == "*":
                return module
            if f"{module}.{name}" in self.modules:
                return f"{module}.{name}"
            source = self.table(module).get(name)
            if source is None or source not in self.modules:
                return module
            module = source
        return module  # a circle of inits handing the name round: the last one asked

    def table(self, package: str) -> dict[str, str]:
        """name → the module a package's init takes it from, one level down, lazily or not."""
        if package in self._tables:
            return self._tables[package]
        self._tables[package] = {}  # a circle of star imports ends here with no names
        init = self.parsed[self.modules[package]]
        found: dict[str, str] = {}
        # Weakest first: a folder scan, then `_import_structure`, then the init's own imports.
        for prefix in init.scans:
            found.update(self._scan(f"{package}.{prefix}" if prefix else package))
        for sub, names in init.structure:
            found.update(dict.fromkeys(names, f"{package}.{sub}"))
        for imported in init.every:
            if imported.module == package or imported.module not in self.modules or imported.names is None:
                continue  # `from . import sub` is a submodule, which `owner` finds first
            for name in imported.names:
                found.update(
                    dict.fromkeys(self._names(imported.module), imported.module)
                    if name == "*"
                    else {name: imported.module}
                )
        self._tables[package] = found
        return found

    def _names(self, module: str) -> list[str]:
        """The names `from module import *` takes: a package's whole table, a module's `__all__`."""
        path = self.modules[module]
        return list(self.table(module)) if is_init(path) else list(self.parsed[path].exports)

    def _scan(self, package: str) -> dict[str, str]:
        """What `define_import_structure` finds in a package's folder: each module's `__all__`, subpackages' names."""
        found: dict[str, str] = {}
        for child in self.children.get(package, ()) if package in self.modules else ():
            found.update(dict.fromkeys(self._names(child), child))
        return found
