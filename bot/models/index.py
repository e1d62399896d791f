"""Model classes of a Transformers tree: each modeling module's `__all__`, kept to `PreTrainedModel` subclasses.

Abstract bases are not model classes: the `…PreTrainedModel` of every model type, and the few
others upstream marks the same way (`DPRPretrainedReader`, `PretrainedFSMTModel`) when their body
adds nothing that builds or runs a model.

Never imports transformers (or torch): lint, selection and `/export-check` validation run in
light jobs and must start in well under a second.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

# What modeling_utils itself derives from PreTrainedModel; every other model class reaches one of
# these through bases a modeling module defines (`BertModel(BertPreTrainedModel)`).
MODEL_ROOTS = frozenset({"PreTrainedModel", "PreTrainedAudioTokenizerBase"})
# Every model type names its own abstract base `<Type>PreTrainedModel`: a base so named that no
# modeling module read defines is still one (an older tree, or a base outside `models/`).
_ROOT_SUFFIX = "PreTrainedModel"
# Upstream's own test of what is a model (utils/check_repo.py `get_models`) skips every name that
# holds `Pretrained` or `PreTrained`: DPR spells its abstract bases `DPRPretrainedContextEncoder`,
# FSMT `PretrainedFSMTModel`, Qwen2.5-Omni `Qwen2_5OmniPreTrainedModelForConditionalGeneration`.
# The name alone is not enough (`Qwen2_5_VisionTransformerPretrainedModel` is a real, auto-mapped
# tower): such a class is abstract only when its body is hollow, see `model_classes`.
_MARKED = re.compile(r"Pre[Tt]rained")
_CLASS = re.compile(r"^class[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
# The common one-line header of plain names (`class BertModel(BertPreTrainedModel):`), read
# without the AST; anything else (generics, keywords, several lines) goes through `ast`.
_SIMPLE = re.compile(r"class[ \t]+([A-Za-z_]\w*)[ \t]*(?:\(([\w., \t]*)\))?[ \t]*:")


@dataclass(frozen=True)
class ModelIndex:
    """model type (the folder under `models/`) → the model classes its modeling module exports."""

    classes_by_type: dict[str, tuple[str, ...]]
    # model class → the config class its body, or its bases', declares (`config: DPRConfig`).
    configs: Mapping[str, str] = field(default_factory=dict)

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


# What a top-level class body holds, read line by line without the AST: a `class` line opens a
# body and a top-level `def` closes it; inside, `__init__` / `forward` (the model builds layers or
# runs) and the config class it declares (`config: BertConfig`, older `config_class = BertConfig`).
# Each match starts at a newline (the text is read with one prepended): a literal first character
# lets the scan skip ahead, several times faster over the 30 MB of modeling code than `^`.
_MEMBER = re.compile(
    r"\n(?:class[ \t]+([A-Za-z_]\w*)"
    r"|(?:async[ \t]+)?def[ \t]"
    r"|[ \t]{4}(?:(?:async[ \t]+)?def[ \t]+(__init__|forward)\b|(__init__|forward)[ \t]*=)"
    r"|[ \t]{4}config(?:[ \t]*:[ \t]*|_class[ \t]*=[ \t]*)[\"']?([A-Za-z_]\w*)[\"']?[ \t]*(?:=[^\n]*|#[^\n]*)?(?=\n|$))"
)


@dataclass(frozen=True)
class Body:
    """What a class body defines: whether it has an `__init__` or `forward`, and its declared config class."""

    runs: bool = False
    config: str | None = None


def class_bodies(source: str) -> dict[str, Body]:
    """Top-level classes of a module's text → what their bodies define (`source` whole, or its lines in order)."""
    found: dict[str, Body] = {}
    current: str | None = None
    for match in _MEMBER.finditer("\n" + source):
        name, method, assigned, config = match.groups()
        if name:
            current = name if name not in found else None  # a second definition: keep the first, as class_bases
            if current:
                found[current] = Body()
        elif current is None:
            continue
        elif method or assigned:
            found[current] = Body(True, found[current].config)
        elif config:
            found[current] = Body(found[current].runs, found[current].config or config)
        else:
            current = None  # a top-level function ends the class body
    return found


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


def is_marked(name: str) -> bool:
    """A name upstream marks as a pretrained base (`…Pretrained…`), other than a type's own `…PreTrainedModel`."""
    return bool(_MARKED.search(name)) and not name.endswith(_ROOT_SUFFIX)


def model_classes(
    exported: tuple[str, ...],
    bases: Mapping[str, tuple[str, ...]],
    everywhere: Mapping[str, tuple[str, ...]] | None = None,
    hollow: Collection[str] = (),
) -> tuple[str, ...]:
    """The exported names that are model classes: `PreTrainedModel` subclasses, less the abstract bases.

    `bases` are the module's own classes; `everywhere` those of every modeling module read,
    for a class that a module re-exports or whose base it imports from another model type.
    The seed's tests never instantiate a `…PreTrainedModel` base (no `all_model_classes`
    lists one), so those have no cells; nor do layers, functions or constants in `__all__`.

    Nor does a marked class (`DPRPretrainedReader`: `Pretrained` in its name, see `is_marked`)
    that is `hollow` (its body defines neither `__init__` nor `forward`) and derives only from
    abstract bases: it builds the same empty model its base does and has nothing to run.
    A marked class with a body of its own, or derived from a real model, is a model class.
    """
    everywhere = everywhere or {}
    known: dict[str, bool] = {}
    abstract: dict[str, bool] = {}

    def parents_of(name: str) -> tuple[str, ...] | None:
        own = bases.get(name)
        return own if own is not None else everywhere.get(name)

    def is_model(name: str, depth: int = 0) -> bool:
        if name in MODEL_ROOTS:
            return True
        if name not in known:
            parents = parents_of(name)
            if parents is None:
                known[name] = name.endswith(_ROOT_SUFFIX)
            else:
                known[name] = False  # a cycle resolves to "not a model" rather than recursing forever
                known[name] = depth < 50 and any(is_model(p, depth + 1) for p in parents if p != name)
        return known[name]

    def is_abstract(name: str, depth: int = 0) -> bool:
        if name in MODEL_ROOTS or name.endswith(_ROOT_SUFFIX):
            return True
        if name not in abstract:
            parents = parents_of(name)
            abstract[name] = False
            abstract[name] = (
                depth < 50
                and is_marked(name)
                and name in hollow
                and bool(parents)
                and all(is_abstract(p, depth + 1) for p in parents if p != name)
            )
        return abstract[name]

    return tuple(name for name in exported if is_model(name) and not is_abstract(name))


def config_classes(
    names: Iterable[str], bodies: Mapping[str, Body], everywhere: Mapping[str, tuple[str, ...]]
) -> dict[str, str]:
    """Each class → the config class its body declares, else the first its bases (left to right) do."""

    def config_of(name: str, depth: int = 0) -> str | None:
        body = bodies.get(name)
        if body is not None and body.config:
            return body.config
        if depth >= 50:
            return None
        return next((c for p in everywhere.get(name, ()) if p != name and (c := config_of(p, depth + 1))), None)

    return {name: config for name in names if (config := config_of(name))}


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


def hollow_classes(bodies: Mapping[str, Body]) -> frozenset[str]:
    """The marked classes (`DPRPretrainedReader`, see `is_marked`) whose bodies define neither `__init__` nor `forward`."""
    return frozenset(name for name, body in bodies.items() if not body.runs and is_marked(name))


# A modeling module's classes → the names of their bases, as `class_bases` reads them.
_Bases = dict[str, tuple[str, ...]]


def _first_bases(bases: Iterable[list[_Bases]]) -> _Bases:
    """class → its bases, across every modeling module read; the first module to define a name wins."""
    everywhere: _Bases = {}
    for per_module in bases:
        for module_bases in per_module:
            for name, parents in module_bases.items():
                everywhere.setdefault(name, parents)
    return everywhere


def _read_bodies(texts: Iterable[list[str]], bases: Iterable[list[_Bases]], *, with_configs: bool) -> dict[str, Body]:
    """The class bodies of every module when `with_configs`, else only of modules that define a marked class."""
    bodies: dict[str, Body] = {}
    for sources, per_module in zip(texts, bases):
        for text, module_bases in zip(sources, per_module):
            if with_configs or any(is_marked(name) for name in module_bases):
                for name, body in class_bodies(text).items():
                    bodies.setdefault(name, body)
    return bodies


def _exported_classes(
    texts: Mapping[str, list[str]], bases: Mapping[str, list[_Bases]], everywhere: _Bases, hollow: Collection[str]
) -> dict[str, tuple[str, ...]]:
    """model type → the model classes its modeling modules export, leaving out types that export none."""
    classes = {}
    for model_type, sources in texts.items():
        exported = tuple(
            c
            for text, own in zip(sources, bases[model_type])
            for c in model_classes(read_all(text), own, everywhere, hollow)
        )
        if exported:
            classes[model_type] = exported
    return classes


def build_index(models_dir: Path | str, *, with_configs: bool = False) -> ModelIndex:
    """The tree's model classes; `with_configs` also reads every class body for its config class.

    Only the catalogue needs the configs (`export-bot zoo catalog`): lint, `/export-check` and
    the runner call this on every start, so the bodies are read only where a class is marked,
    as selection does.
    """
    models_dir = Path(models_dir)
    texts = {
        model_type: [path.read_text(encoding="utf-8") for path in paths]
        for model_type, paths in modeling_modules(models_dir).items()
    }
    bases = {model_type: [class_bases(text)[0] for text in sources] for model_type, sources in texts.items()}
    everywhere = _first_bases(bases.values())
    bodies = _read_bodies(texts.values(), bases.values(), with_configs=with_configs)
    classes = _exported_classes(texts, bases, everywhere, hollow_classes(bodies))
    if not with_configs:
        return ModelIndex(classes)
    every_class = {c for exported in classes.values() for c in exported}
    return ModelIndex(classes, config_classes(sorted(every_class), bodies, everywhere))


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
