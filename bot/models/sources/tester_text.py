"""What a Transformers checkout's test modules declare, read from their text (never imported).

The `transformers-tests:PATH` source lists classes from here, so listing a checkout of 400 model
folders costs a text scan, and a test module that does not import still lists every class with
all its cells (docs/runner.md, model sources). Only the assignments that matter go through the
AST, as selection reads modeling modules (`bot/select/tree.py`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

# The upstream export tests: `ExportTesterMixin` (forward) is mixed into ModelTesterMixin, and
# generate tests exist only on test classes that mix in `ExportGenerateTesterMixin`.
EXPORT_MIXIN = "ExportTesterMixin"
EXPORT_GENERATE_MIXIN = "ExportGenerateTesterMixin"
GENERATION_MIXIN = "GenerationTesterMixin"
# Without a list of its own, a class is taken as generative when its name says it generates text:
# the heads `all_generative_model_classes` holds (upstream computes it with `can_generate()`).
GENERATIVE_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration", "WithLMHead")
# Each pattern starts at a newline (the text is read with one prepended), so the regex engine
# jumps between newlines instead of trying every position: 400 modules of upstream size scan in
# well under a second.
_CLASS = re.compile(r"\nclass[ \t]+(\w+)[ \t]*(?:\(((?:[^()]|\([^()]*\))*)\))?[ \t]*:")
_TOP_LEVEL = re.compile(r"\n(?=[A-Za-z_@])")
_FROM_IMPORT = re.compile(r"\nfrom[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)")
# Class-body assignments the source reads (found with `str.find`, see _attributes).
_WANTED = ("all_model_classes", "all_generative_model_classes", "test_torch_exportable", "model_tester_class")
_ASSIGNMENT = re.compile(r"[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*")
# Upstream's CausalLMModelTest lists its classes through its tester's `*_class` attributes.
_TESTER_ATTR = re.compile(
    r"\n[ \t]+(base_model_class|causal_lm_class|sequence_classification_class|token_classification_class"
    r"|question_answering_class)[ \t]*=[ \t]*"
)
# Upstream's CausalLMModelTester infers each of these its tester leaves unset from the base class's
# name (`LlamaModel` → `LlamaForCausalLM`), among the classes the base class's module defines.
INFERRED_SUFFIXES = {
    "causal_lm_class": "ForCausalLM",
    "sequence_classification_class": "ForSequenceClassification",
    "question_answering_class": "ForQuestionAnswering",
    "token_classification_class": "ForTokenClassification",
}
_FAMILY_INPUTS = ("pixel_values", "input_ids", "input_values", "input_features", "decoder_input_ids")


@dataclass(frozen=True)
class TestClassText:
    """One test class as its module's text declares it."""

    name: str
    bases: tuple[str, ...]  # base names as written (`unittest.TestCase` → `TestCase`)
    listed: tuple[str, ...]  # all_model_classes
    generative: tuple[str, ...] | None  # all_generative_model_classes when the class spells it out
    exportable: bool | None  # test_torch_exportable when set to a literal
    # A tester that spells `base_model_class` but leaves siblings unset: the base class's name and
    # the suffixes of the classes to look for next to it (`INFERRED_SUFFIXES`).
    infer_from: str | None = None
    infer_suffixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModuleText:
    """A test module's test classes and where its imported names come from (relative to the checkout)."""

    path: Path
    classes: tuple[TestClassText, ...]
    # imported name (an alias too) → the checkout file defining it and its name there (resolved, not yet read)
    imports: dict[str, tuple[Path, str]]
    inputs: frozenset[str] = frozenset()  # which of _FAMILY_INPUTS the text spells as a string
    decoder_switch: bool = False  # the text mentions `is_decoder` (a BERT-like stack, not decoder-only)


def dotted(root: Path, path: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def read_module(root: Path, path: Path, text: str | None = None) -> ModuleText:
    """The test classes of one module and the checkout files its `from … import` lines name."""
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ModuleText(path, (), {})
    text = "\n" + text
    first_class = _CLASS.search(text)
    # Upstream modules import at the top; what is imported inside a class body never names a base.
    head = text[: first_class.start()] if first_class else text
    inputs = frozenset(key for key in _FAMILY_INPUTS if f'"{key}"' in text or f"'{key}'" in text)
    return ModuleText(path, _classes(text), _imports(root, path, head), inputs, "is_decoder" in text)


def _imports(root: Path, path: Path, text: str) -> dict[str, tuple[Path, str]]:
    found: dict[str, tuple[Path, str]] = {}
    package = path.parent
    for match in _FROM_IMPORT.finditer(text):
        spelled, names = match.group(1), match.group(2).strip("() \t")
        level = len(spelled) - len(spelled.lstrip("."))
        module = spelled[level:]
        if level:
            base = package
            for _ in range(level - 1):
                base = base.parent
        elif module == "tests" or module.startswith("tests."):
            base = root
        else:
            continue  # outside the checkout's tests (transformers, unittest, …)
        target = base.joinpath(*module.split(".")) if module else base
        file = target.with_suffix(".py") if not target.is_dir() else target / "__init__.py"
        for name in names.replace("\n", " ").split(","):
            name = name.split("#")[0].strip()
            if name and name != "*":
                original, _, alias = name.partition(" as ")
                found[(alias or original).strip()] = (file, original.strip())
    return found


def _classes(text: str) -> tuple[TestClassText, ...]:
    headers = list(_CLASS.finditer(text))
    bodies: dict[str, str] = {}
    out = []
    for header in headers:
        following = _TOP_LEVEL.search(text, header.end())
        body = text[header.end() : following.start() if following else len(text)]
        bodies[header.group(1)] = body
        out.append((header, body))
    classes = []
    for header, body in out:
        attrs = _attributes(body)
        listed = attrs.get("all_model_classes")
        inferred: tuple[str | None, tuple[str, ...]] = (None, ())
        if listed is None and "model_tester_class" in attrs:
            tester = attrs["model_tester_class"]
            listed, inferred = _tester_classes(bodies.get(tester[0], "")) if tester else ((), inferred)
        generative = attrs.get("all_generative_model_classes")
        exportable = attrs.get("test_torch_exportable")
        classes.append(
            TestClassText(
                header.group(1),
                tuple(b.strip().split(".")[-1] for b in _split_bases(header.group(2) or "")),
                tuple(listed or ()),
                None if generative is None else tuple(generative),
                exportable if isinstance(exportable, bool) else None,
                *inferred,
            )
        )
    return tuple(classes)


def _split_bases(spelled: str) -> list[str]:
    return [b for b in (part.split("=")[0] if "=" in part else part for part in spelled.split(",")) if b.strip()]


def _attributes(body: str) -> dict[str, object]:
    """The class-body assignments the source needs: names listed, or a literal bool.

    Found with `str.find` per name (a regex over every line of a long class body costs ten times more).
    """
    found: dict[str, object] = {}
    for name in _WANTED:
        start = body.find(name)
        while start != -1:
            line_start = body.rfind("\n", 0, start) + 1
            match = _ASSIGNMENT.match(body, start + len(name))
            if match and not body[line_start:start].strip(" \t"):
                value = _value(body, match.end())
                if value is not None:
                    found[name] = value
                break
            start = body.find(name, start + len(name))
    return found


def _value(body: str, start: int) -> object:
    try:
        node = ast.parse(_expression(body, start).strip(), mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return _names(node)


def _expression(text: str, start: int) -> str:
    """From `start` to the end of the statement: the first newline outside brackets."""
    from bot.models.index import outside_brackets

    end = outside_brackets(text, start, "\n")
    return text[start:end] if end is not None else text[start:]


def _names(node: ast.expr) -> tuple[str, ...]:
    """Class names in `(A, B) if is_torch_available() else ()`, `[A] + [B]`, `A`."""
    if isinstance(node, ast.IfExp):
        return _names(node.body)
    if isinstance(node, ast.BinOp):
        return _names(node.left) + _names(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(name for element in node.elts for name in _names(element))
    if isinstance(node, ast.Name) and node.id != "None":
        return (node.id,)
    if isinstance(node, ast.Attribute):
        return (node.attr,)
    return ()


def _tester_classes(tester_body: str) -> tuple[tuple[str, ...], tuple[str | None, tuple[str, ...]]]:
    """The classes a tester spells out, and what is left to infer from its base class (`INFERRED_SUFFIXES`)."""
    names: list[str] = []
    spelled: dict[str, tuple[str, ...]] = {}
    for match in _TESTER_ATTR.finditer(tester_body):
        try:
            node = ast.parse(_expression(tester_body, match.end()).strip(), mode="eval").body
        except SyntaxError:
            continue
        spelled[match.group(1)] = _names(node)
        names += [n for n in spelled[match.group(1)] if n not in names]
    base = spelled.get("base_model_class")
    if not base:
        return tuple(names), (None, ())
    unset = tuple(suffix for attribute, suffix in INFERRED_SUFFIXES.items() if attribute not in spelled)
    return tuple(names), (base[0], unset) if unset else (None, ())


def generate_eligible(ancestors: set[str] | frozenset[str]) -> bool:
    """Whether a test class runs the generate export tests, from the names of its ancestors.

    Upstream: only test classes that mix in `ExportGenerateTesterMixin`. A checkout whose testers
    mix in no export tests at all (it predates them) is served as if they did: generate follows
    `GenerationTesterMixin` there.
    """
    if EXPORT_GENERATE_MIXIN in ancestors:
        return True
    if EXPORT_MIXIN in ancestors:
        return False
    return GENERATION_MIXIN in ancestors


def looks_generative(model_class: str) -> bool:
    return model_class.endswith(GENERATIVE_SUFFIXES)


class CheckoutText:
    """Reads test modules on demand and resolves base classes across the checkout's files, each file once."""

    def __init__(self, root: Path):
        self.root = root
        self._modules: dict[Path, ModuleText] = {}
        self._ancestors: dict[tuple[Path, str], frozenset[str]] = {}

    def module(self, path: Path) -> ModuleText:
        found = self._modules.get(path)
        if found is None:
            found = self._modules[path] = read_module(self.root, path)
        return found

    def ancestors(self, path: Path, class_name: str, _seen: frozenset = frozenset()) -> frozenset[str]:
        """The names of a class and of every base the checkout's text lets us follow."""
        key = (path, class_name)
        if key in self._ancestors:
            return self._ancestors[key]
        if key in _seen:
            return frozenset({class_name})
        module = self.module(path)
        names = {class_name}
        own = next((c for c in module.classes if c.name == class_name), None)
        if own is None:
            # Imported (perhaps under an alias) from another checkout file, or defined outside the checkout.
            source = module.imports.get(class_name)
            if source is not None and source[0].is_file() and source[0] != path:
                names |= self.ancestors(source[0], source[1], _seen | {key})
        else:
            for base in own.bases:
                names.add(base)
                if any(c.name == base for c in module.classes):
                    names |= self.ancestors(path, base, _seen | {key})
                    continue
                source = module.imports.get(base)
                if source is not None and source[0].is_file():
                    names |= self.ancestors(source[0], source[1], _seen | {key})
        result = self._ancestors[key] = frozenset(names)
        return result


def family_from_text(inputs: frozenset[str], model_class: str, generative: bool) -> str:
    """The family from the inputs the tester feeds (`ModuleText.inputs`), before the class name is guessed from."""
    if {"pixel_values", "input_ids"} <= inputs and not model_class.endswith(("VisionModel", "ForImageClassification")):
        return "multimodal"
    if inputs & {"input_values", "input_features"}:
        return "audio"
    if "pixel_values" in inputs:
        return "vision"
    if "decoder_input_ids" in inputs:
        return "encoder-decoder"
    if generative or model_class.endswith(("ForCausalLM", "LMHeadModel")):
        return "decoder"
    return "text-encoder"
