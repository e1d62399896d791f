"""A Transformers tree at one ref: model types, their exported classes, and who imports whom (never importing the code)."""

from __future__ import annotations

import ast
import logging
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from bot.models.index import class_bases, class_bodies, hollow_classes, is_marked, model_classes, read_all

log = logging.getLogger(__name__)

MODELS_DIR = "src/transformers/models"

# Files of a model type folder that define what gets exported; processors, tokenizers and
# image processors only shape inputs, which the bot's sources build themselves.
MODEL_STEMS = ("modeling_", "modular_", "configuration_")

# `..auto` dispatches by config at run time: importing it ties a model to no particular type.
_DYNAMIC = frozenset({"auto"})

# Cheap screens run over every file before anything is parsed: on the real tree only a
# handful of modeling modules import another type, and the AST is built for those alone.
_CROSS_TYPE = re.compile(r"from \.\.[a-z_]|transformers\.models\.[a-z_]")
_IMPORT_LINE = re.compile(
    r"^[ \t]*from[ \t]+(\.\.[A-Za-z_][\w.]*|transformers\.models\.[\w.]+)[ \t]+import"
    r"|^[ \t]*import[ \t]+(transformers\.models\.[\w.]+)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class ModelTree:
    """model type → exported classes, runtime imports of its modeling module, and modular parents."""

    classes_by_type: Mapping[str, tuple[str, ...]]
    # type → other types its modeling module imports when it runs (TYPE_CHECKING blocks excluded).
    imports: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # type → types its modular_<type>.py imports from (the code generator inherits from them).
    modular_parents: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Every type with a modeling or modular module, exporting classes or not.
    folders: frozenset[str] = frozenset()

    @property
    def types(self) -> frozenset[str]:
        return self.folders | frozenset(self.classes_by_type)

    def classes(self, model_type: str) -> tuple[str, ...]:
        return self.classes_by_type.get(model_type, ())

    def dependents(self, changed: Iterable[str]) -> dict[str, str]:
        """Types whose modeling code imports a changed type at run time, transitively → the type it imports."""
        return _closure(changed, self.imports)

    def modular_descendants(self, changed: Iterable[str]) -> dict[str, str]:
        """Types whose modular file inherits from a changed type, transitively → the type it inherits from."""
        return _closure(changed, self.modular_parents)


def _closure(start: Iterable[str], parents: Mapping[str, frozenset[str]]) -> dict[str, str]:
    children: dict[str, list[str]] = {}
    for child, edges in parents.items():
        for parent in edges:
            children.setdefault(parent, []).append(child)
    start = set(start)
    found: dict[str, str] = {}
    queue = deque(sorted(start))
    while queue:
        parent = queue.popleft()
        for child in sorted(children.get(parent, ())):
            if child not in start and child not in found:
                found[child] = parent
                queue.append(child)
    return found


def exported_classes(source: str, everywhere: Mapping[str, tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The model classes a modeling module exports: its `__all__`, kept to `PreTrainedModel` subclasses.

    Read from the source text (bot/models/index.py): `BertLayer` and helper functions in
    `__all__` are not model classes, and abstract bases (`…PreTrainedModel`, a hollow
    `DPRPretrainedReader`) have no cells.
    """
    return model_classes(
        read_all(source), class_bases(source)[0], everywhere or {}, hollow_classes(class_bodies(source))
    )


def imported_types(module: str | None, level: int, own_type: str) -> str | None:
    """The model type an import names (`..llama.modeling_llama`, `transformers.models.llama`), else None."""
    if level == 2 and module:
        name = module.split(".")[0]
    elif level == 0 and module and module.startswith("transformers.models."):
        name = module.split(".")[2] if module.count(".") >= 2 else None
    else:
        return None
    return None if name in _DYNAMIC or name == own_type or not name else name


def runtime_imports(source: str, own_type: str) -> frozenset[str]:
    """Types a modeling module imports when it runs: module level and inside functions, not under TYPE_CHECKING."""
    if not _CROSS_TYPE.search(source):
        return frozenset()
    candidates = {m.group(1) or m.group(2) for m in _IMPORT_LINE.finditer(source)}
    if not any(_type_of_spelling(c, own_type) for c in candidates):
        return frozenset()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        # A modeling file that does not parse cannot be imported either: fall back to the lines found.
        return frozenset(t for t in (_type_of_spelling(c, own_type) for c in candidates) if t)
    found: set[str] = set()
    _visit(tree, own_type, found)
    return frozenset(found)


def _type_of_spelling(spelling: str, own_type: str) -> str | None:
    if spelling.startswith(".."):
        return imported_types(spelling[2:], 2, own_type)
    return imported_types(spelling, 0, own_type)


def _visit(node: ast.AST, own_type: str, found: set[str]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and is_type_checking(child.test):
            for stmt in child.orelse:
                _visit_stmt(stmt, own_type, found)
            continue
        _visit_stmt(child, own_type, found)


def _visit_stmt(node: ast.AST, own_type: str, found: set[str]) -> None:
    if isinstance(node, ast.ImportFrom):
        found.add(imported_types(node.module, node.level, own_type) or "")
    elif isinstance(node, ast.Import):
        found.update(imported_types(a.name, 0, own_type) or "" for a in node.names)
    else:
        _visit(node, own_type, found)
    found.discard("")


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def split_model_path(path: str, models_dir: str = MODELS_DIR) -> tuple[str, str] | None:
    """`src/transformers/models/<type>/<file>.py` → (type, file stem); anything else → None."""
    prefix = models_dir.rstrip("/") + "/"
    if not path.startswith(prefix) or not path.endswith(".py"):
        return None
    parts = path[len(prefix) :].split("/")
    if len(parts) != 2:
        return None
    return parts[0], parts[1][: -len(".py")]


def model_type_of(path: str, models_dir: str = MODELS_DIR) -> str | None:
    """The model type a modeling/modular/configuration file belongs to, else None."""
    split = split_model_path(path, models_dir)
    if split and split[1].startswith(MODEL_STEMS):
        return split[0]
    return None


def source_paths(paths: Iterable[str], models_dir: str = MODELS_DIR) -> tuple[dict[str, str], dict[str, str]]:
    """From a file listing, the modeling and modular module of each type: ({type: path}, {type: path})."""
    modeling, modular = {}, {}
    for path in paths:
        split = split_model_path(path, models_dir)
        if split is None:
            continue
        model_type, stem = split
        if stem == f"modeling_{model_type}":
            modeling[model_type] = path
        elif stem == f"modular_{model_type}":
            modular[model_type] = path
    return modeling, modular


# The screen `git grep` runs; the fixed-string fallback (git without PCRE) is filtered by _IMPORT_LINE after.
# The same pass finds the class headers whose bases tell model classes (PreTrainedModel
# subclasses) from layers; a layer's `(nn.Module)` and an output's `(ModelOutput)` are left out.
_IMPORT_PCRE = (
    r"^\s*(from|import)\s+(\.\.[A-Za-z_]|transformers\.models\.)"
    r"|^class\s+\w+\s*\((?!nn\.Module\)|ModelOutput\))"
)
_IMPORT_FIXED = "from ..\ntransformers.models.\nclass "


class Grep(Protocol):
    def __call__(
        self, pattern: str, pathspecs: list[str], *, mode: str = "perl", after: int = 0
    ) -> list[tuple[str, str]]: ...


def read_tree(
    list_files: Callable[[str], list[str]],
    grep: Grep,
    read_files: Callable[[Iterable[str]], dict[str, str]],
    models_dir: str = MODELS_DIR,
) -> ModelTree:
    """The tree at one ref through the readers given (git at a ref in practice), grepping instead of parsing.

    Only the `__all__` assignments, the class headers and the cross-type import lines leave git; a modeling
    module whose cross-type import is indented (inside a function, a try or a
    TYPE_CHECKING block) is read whole and walked with the AST to tell run time from typing, and
    one that defines a marked class (`DPRPretrainedReader`) is read whole to see what its body holds.
    """
    modeling, modular = source_paths(list_files(models_dir), models_dir)
    type_of = {path: t for t, path in (*modeling.items(), *modular.items())}
    specs = {"modeling": f"{models_dir}/*/modeling_*.py", "modular": f"{models_dir}/*/modular_*.py"}

    snippets: dict[str, list[str]] = {}
    # `__all__` closes the module in Transformers; 300 lines of context cover the longest list.
    for path, line in grep("^__all__", [specs["modeling"]], mode="basic", after=300):
        snippets.setdefault(path, []).append(line)
    imports, parents, needs_ast, class_lines = _sort_import_lines(
        _import_lines(grep, list(specs.values())), type_of, modular
    )
    for path, source in read_files(sorted(needs_ast)).items():
        imports[type_of[path]] = set(runtime_imports(source, type_of[path]))

    bases = _class_bases(class_lines, read_files)
    # Every modeling module's classes (`modeling_blip_text.py` too): a re-exported class, or a
    # base imported from another model type, resolves through them.
    everywhere: dict[str, tuple[str, ...]] = {}
    for own in bases.values():
        for name, found in own.items():
            everywhere.setdefault(name, found)
    hollow = _marked_hollow(bases, read_files)
    classes = {
        t: model_classes(read_all("\n".join(snippets.get(p, ()))), bases.get(p, {}), everywhere, hollow)
        for t, p in sorted(modeling.items())
    }

    return ModelTree(
        {t: c for t, c in classes.items() if c},
        {t: frozenset(i) for t, i in imports.items() if i},
        {t: frozenset(p) for t, p in parents.items() if p},
        frozenset(modeling) | frozenset(modular),
    )


def _sort_import_lines(
    lines: Iterable[tuple[str, str]], type_of: Mapping[str, str], modular: Mapping[str, str]
) -> tuple[dict[str, set[str]], dict[str, set[str]], set[str], dict[str, list[str]]]:
    """The grepped import and class lines, sorted: each type's run-time imports and modular parents (by
    model type), the modeling modules whose indented imports need the AST, and each module's class lines."""
    imports: dict[str, set[str]] = {}
    parents: dict[str, set[str]] = {}
    needs_ast: set[str] = set()
    class_lines: dict[str, list[str]] = {}
    for path, line in lines:
        if line.startswith("class"):
            if "/modeling_" in path:
                class_lines.setdefault(path, []).append(line)
            continue
        own = type_of.get(path)
        match = _IMPORT_LINE.match(line)
        if own is None or match is None:
            continue
        target = _type_of_spelling(match.group(1) or match.group(2), own)
        if target is None:
            continue
        if path == modular.get(own):
            parents.setdefault(own, set()).add(target)
        elif line[:1].isspace():
            needs_ast.add(path)
        else:
            imports.setdefault(own, set()).add(target)
    return imports, parents, needs_ast, class_lines


def _class_bases(lines: dict[str, list[str]], read_files) -> dict[str, dict[str, tuple[str, ...]]]:
    """path → its top-level classes → their base names, from the `class` lines git grep found.

    A header that continues past its line (one file in Transformers 5.x) has its file read whole.
    """
    bases, cut = {}, []
    for path, found in lines.items():
        bases[path], complete = class_bases("\n".join(found))
        if not complete:
            cut.append(path)
    for path, source in read_files(sorted(cut)).items():
        bases[path] = class_bases(source)[0]
    return bases


def _marked_hollow(bases: Mapping[str, Mapping[str, tuple[str, ...]]], read_files) -> frozenset[str]:
    """The marked classes (`DPRPretrainedReader`) whose bodies define neither `__init__` nor `forward`.

    Only the modules that define a marked class are read whole (eight files in Transformers 5.x):
    the class headers git grep found do not say what a body holds.
    """
    paths = sorted(path for path, found in bases.items() if any(is_marked(name) for name in found))
    found: set[str] = set()
    for source in read_files(paths).values():
        found |= hollow_classes(class_bodies(source))
    return frozenset(found)


def _import_lines(grep: Grep, specs: list[str]) -> list[tuple[str, str]]:
    try:
        return grep(_IMPORT_PCRE, specs, mode="perl")
    except RuntimeError as exc:  # git built without PCRE: screen with fixed strings instead (slower)
        log.info("git grep -P unavailable (%s); using fixed strings", exc)
        return grep(_IMPORT_FIXED, specs, mode="fixed")
