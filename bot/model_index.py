"""Model classes of a Transformers tree: each modeling module's `__all__`, kept to `PreTrainedModel` subclasses.

Never imports transformers (or torch): lint, selection and `/export-check` validation run in
light jobs and must start in well under a second.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# What modeling_utils itself derives from PreTrainedModel; every other model class reaches one of
# these through bases a modeling module defines (`BertModel(BertPreTrainedModel)`).
MODEL_ROOTS = frozenset({"PreTrainedModel", "PreTrainedAudioTokenizerBase"})
# Every model type names its own abstract base `<Type>PreTrainedModel`: a base so named that no
# modeling module read defines is still one (an older tree, or a base outside `models/`).
_ROOT_SUFFIX = "PreTrainedModel"
_CLASS = re.compile(r"^class[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
# The common one-line header of plain names (`class BertModel(BertPreTrainedModel):`), read
# without the AST; anything else (generics, keywords, several lines) goes through `ast`.
_SIMPLE = re.compile(r"class[ \t]+([A-Za-z_]\w*)[ \t]*(?:\(([\w., \t]*)\))?[ \t]*:")


@dataclass(frozen=True)
class ModelIndex:
    """model type (the folder under `models/`) → the model classes its modeling module exports."""

    classes_by_type: dict[str, tuple[str, ...]]

    @property
    def classes(self) -> frozenset[str]:
        return frozenset(c for classes in self.classes_by_type.values() for c in classes)

    def type_of(self, model_class: str) -> str | None:
        for model_type, classes in self.classes_by_type.items():
            if model_class in classes:
                return model_type
        return None


_ALL = re.compile(r"^__all__\s*(?::[^=]*)?=\s*([\[(].*?[\])])", re.MULTILINE | re.DOTALL)


def read_all(source: str) -> tuple[str, ...]:
    """The string literals of a module-level `__all__ = [...]` (or tuple), else ().

    Only the assignment itself goes through the AST: parsing all 500-odd modeling modules
    whole takes seconds, and selection must take well under two.
    """
    for match in _ALL.finditer(source):
        try:
            node = ast.parse(match.group(1), mode="eval").body
        except SyntaxError:
            continue
        if isinstance(node, (ast.List, ast.Tuple)):
            return tuple(e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


def class_bases(source: str) -> tuple[dict[str, tuple[str, ...]], bool]:
    """Top-level classes of a module's text → the names of their bases; False when a header was cut off.

    `source` may be the whole file or `git grep` lines around each `class` line: only the
    headers are parsed (a header spans at most a few lines in Transformers), never the module.
    """
    found: dict[str, tuple[str, ...]] = {}
    complete = True
    for match in _CLASS.finditer(source):
        simple = _SIMPLE.match(source, match.start())
        if simple:
            names = (simple.group(2) or "").split(",")
            found.setdefault(simple.group(1), tuple(n.strip().rpartition(".")[2] for n in names if n.strip()))
            continue
        header = _header(source, match.start())
        if header is None:
            complete = False
            continue
        try:
            node = ast.parse(header + " ...").body[0]
        except SyntaxError:
            continue  # `class` in a string, or a header that does not parse: not a class of the module
        if isinstance(node, ast.ClassDef):
            found.setdefault(node.name, tuple(name for name in map(_base_name, node.bases) if name))
    return found, complete


def _header(source: str, start: int) -> str | None:
    """`class X(A, B):` from `start`, through the colon outside brackets; None when the text ends first."""
    end = outside_brackets(source, start, ":")
    return source[start : end + 1] if end is not None else None


def outside_brackets(text: str, start: int, stop: str) -> int | None:
    """The index of the first `stop` character at or after `start` that no bracket encloses; None if none.

    Class headers and assignments span lines inside brackets; reading them from the text needs
    this one scan (selection and the tester source both do, without importing anything).
    """
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == stop and depth <= 0:
            return index
    return None


def _base_name(node: ast.expr) -> str | None:
    """`A` → A, `mod.A` → A, `A[T]` → A; a call or anything else names no class."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def model_classes(
    exported: tuple[str, ...],
    bases: Mapping[str, tuple[str, ...]],
    everywhere: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[str, ...]:
    """The exported names that are model classes: `PreTrainedModel` subclasses, less the abstract `…PreTrainedModel` bases.

    `bases` are the module's own classes; `everywhere` those of every modeling module read,
    for a class that a module re-exports or whose base it imports from another model type.
    The seed's tests never instantiate a `…PreTrainedModel` base (no `all_model_classes`
    lists one), so those have no cells; nor do layers, functions or constants in `__all__`.
    """
    known: dict[str, bool] = {}

    def is_model(name: str, depth: int = 0) -> bool:
        if name in MODEL_ROOTS:
            return True
        if name not in known:
            own = bases.get(name)
            parents = own if own is not None else (everywhere or {}).get(name)
            if parents is None:
                known[name] = name.endswith(_ROOT_SUFFIX)
            else:
                known[name] = False  # a cycle resolves to "not a model" rather than recursing forever
                known[name] = depth < 50 and any(is_model(p, depth + 1) for p in parents if p != name)
        return known[name]

    return tuple(name for name in exported if not name.endswith(_ROOT_SUFFIX) and is_model(name))


def modeling_modules(models_dir: Path) -> dict[str, list[Path]]:
    """model type → its PyTorch modeling modules.

    Usually one, `modeling_<type>.py`, but some folders hold more than one model
    (`donut/modeling_donut_swin.py`, `data2vec/modeling_data2vec_audio.py`), and their
    classes are model classes too.
    """
    found: dict[str, list[Path]] = {}
    for path in sorted(models_dir.glob("*/modeling_*.py")):
        found.setdefault(path.parent.name, []).append(path)
    return found


def build_index(models_dir: Path | str) -> ModelIndex:
    models_dir = Path(models_dir)
    texts = {
        model_type: [path.read_text(encoding="utf-8") for path in paths]
        for model_type, paths in modeling_modules(models_dir).items()
    }
    bases = {model_type: [class_bases(text)[0] for text in sources] for model_type, sources in texts.items()}
    everywhere: dict[str, tuple[str, ...]] = {}
    for per_module in bases.values():
        for module_bases in per_module:
            for name, parents in module_bases.items():
                everywhere.setdefault(name, parents)
    classes = {}
    for model_type, sources in texts.items():
        exported = tuple(
            c for text, own in zip(sources, bases[model_type]) for c in model_classes(read_all(text), own, everywhere)
        )
        if exported:
            classes[model_type] = exported
    return ModelIndex(classes)


def installed_models_dir() -> Path | None:
    """`transformers/models` of the installed package, found without importing it."""
    spec = importlib.util.find_spec("transformers")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / "models"


@lru_cache(maxsize=1)
def installed_index() -> ModelIndex:
    """The installed Transformers' model classes; empty when Transformers is not installed."""
    models_dir = installed_models_dir()
    return build_index(models_dir) if models_dir and models_dir.is_dir() else ModelIndex({})
