"""Model classes of a Transformers tree, read from each modeling module's `__all__` with the AST.

Never imports transformers (or torch): lint, selection and `/export-check` validation run in
light jobs and must start in well under a second.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path


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
    classes = {}
    for model_type, paths in modeling_modules(models_dir).items():
        exported = tuple(c for path in paths for c in read_all(path.read_text(encoding="utf-8")))
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
