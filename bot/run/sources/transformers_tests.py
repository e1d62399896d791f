"""The `transformers-tests:PATH` model source: a Transformers checkout's model testers (docs/runner.md protocol)."""

from __future__ import annotations

import importlib
import inspect
import logging
import random
import sys
import unittest
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.catalog import PRESETS as ZOO_PRESETS
from bot.run.sources.base import BuildError, Built, ClassInfo, SourceError

logger = logging.getLogger(__name__)

_GLOB = "tests/models/*/test_modeling_*.py"
# Inputs named like these make a class vision/audio for `ClassInfo.family`.
_AUDIO_INPUTS = ("input_values", "input_features", "input_audio", "audio_values")


@dataclass(frozen=True)
class _Entry:
    """Where one model class comes from: its test module and test class, or why it cannot be read."""

    info: ClassInfo
    module: str  # dotted name, e.g. tests.models.bert.test_modeling_bert
    test_class: type | None
    model_class: type | None
    error: str | None = None


class TransformersTestsSource:
    """Model classes, configs and inputs from `PATH/tests/models/*/test_modeling_*.py` of a checkout."""

    def __init__(self, path: str | Path):
        self.root = Path(path).expanduser().resolve()
        self.spec = f"transformers-tests:{path}"
        tests = self.root / "tests"
        if not self.root.is_dir():
            raise SourceError(f"--source {self.spec}: {self.root} is not a directory; give a Transformers checkout")
        if not (tests / "models").is_dir():
            raise SourceError(
                f"--source {self.spec}: {tests / 'models'} is missing; PATH must be the root of a Transformers "
                "source checkout (the folder holding tests/models/<type>/test_modeling_<type>.py)"
            )
        self._files = sorted(self.root.glob(_GLOB))
        if not self._files:
            raise SourceError(f"--source {self.spec}: no {_GLOB} under {self.root}")
        self._entries: dict[str, _Entry] | None = None
        self._modules: dict[str, Any] = {}  # the checkout's `tests.*` modules, once imported

    def classes(self) -> list[ClassInfo]:
        return [entry.info for entry in self._read().values()]

    def presets(self) -> dict[str, tuple[str, ...]]:
        entries = self._read()
        names = tuple(entries)
        generative = [n for n, e in entries.items() if e.info.generative]
        forward = [n for n, e in entries.items() if not e.info.generative]
        # The zoo's picks where the checkout has them; otherwise one forward and one generative class.
        smoke = tuple(n for n in ZOO_PRESETS["smoke"] if n in entries) or tuple(forward[:1] + generative[:1])
        core = tuple(n for n in ZOO_PRESETS["core"] if n in entries) or smoke
        return {"smoke": smoke, "core": core, "all": names}

    def build(self, model_class: str, *, generate: bool) -> Built:
        entry = self._read().get(model_class)
        if entry is None:
            folder = self.root / "tests" / "models"
            raise BuildError(f"no test class under {folder} lists {model_class} in all_model_classes")
        if entry.error:
            raise BuildError(entry.error)
        where = f"{entry.module}.{entry.test_class.__name__}"
        test = entry.test_class()
        _seed_testers(self._modules.values())
        try:
            test.setUp()
        except Exception as exc:
            raise BuildError(f"{where}.setUp() raised {type(exc).__name__}: {exc}") from exc
        try:
            if getattr(test, "model_tester", None) is None:
                raise BuildError(f"{where}.setUp() left no model_tester")
            if generate:
                if entry.model_class not in tuple(test.all_generative_model_classes):
                    raise BuildError(f"{model_class} is not in {where}.all_generative_model_classes")
                config, inputs = test.prepare_config_and_inputs_for_generate()
            else:
                tester = test.model_tester
                if hasattr(tester, "prepare_config_and_inputs_for_model_class"):
                    config, inputs = tester.prepare_config_and_inputs_for_model_class(entry.model_class)
                else:
                    config, inputs = tester.prepare_config_and_inputs_for_common()
                inputs = test._prepare_for_class(inputs, entry.model_class)
        except BuildError:
            raise
        except Exception as exc:
            step = "prepare_config_and_inputs_for_generate()" if generate else "the model tester"
            raise BuildError(f"{where}: {step} raised {type(exc).__name__}: {exc}") from exc
        finally:
            _tear_down(test)
        exportable = bool(getattr(test, "test_torch_exportable", True))
        return Built(model_class=entry.model_class, config=config, inputs=dict(inputs), exportable=exportable)

    def _read(self) -> dict[str, _Entry]:
        """Import every test module once; a module that fails lists its classes by name, each a BuildError."""
        if self._entries is None:
            entries: dict[str, _Entry] = {}
            with _checkout_tests_package(self.root) as self._modules:
                for path in self._files:
                    for entry in self._read_module(path):
                        entries.setdefault(entry.info.model_class, entry)
            self._entries = entries
        return self._entries

    def _read_module(self, path: Path) -> list[_Entry]:
        model_type = path.parent.name
        dotted = ".".join(path.relative_to(self.root).with_suffix("").parts)
        try:
            module = importlib.import_module(dotted)
        except Exception as exc:
            # The module's classes cannot be known without it; listed by their names in the file.
            error = f"importing {path} raised {type(exc).__name__}: {exc}"
            logger.warning("%s", error)
            return [
                _Entry(ClassInfo(name, model_type, False, _family_from_name(name)), dotted, None, None, error)
                for name in _listed_names(path)
            ]
        entries = []
        for test_class in _test_classes(module):
            test = test_class()
            generative = set(getattr(test, "all_generative_model_classes", ()) or ())
            for cls in test.all_model_classes:
                info = ClassInfo(cls.__name__, model_type, cls in generative, _family(cls, cls in generative))
                entries.append(_Entry(info, dotted, test_class, cls))
        return entries


def _test_classes(module) -> Iterator[type]:
    """The module's own TestCase classes that list model classes (a mixin imported from elsewhere is not one)."""
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if (
            issubclass(obj, unittest.TestCase)
            and obj.__module__ == module.__name__
            and getattr(obj, "all_model_classes", None)
        ):
            yield obj


@contextmanager
def _checkout_tests_package(root: Path):
    """Import with `root` first on sys.path, so `tests` is the checkout's package and relative imports resolve.

    Another `tests` package (this bot's own, under pytest) is set aside while importing and put back after;
    the checkout's modules stay alive through the classes read from them.
    """
    foreign = {n: m for n, m in sys.modules.items() if _is_tests(n) and not _inside(m, root)}
    for name in foreign:
        sys.modules.pop(name, None)
    imported: dict[str, Any] = {}
    sys.path.insert(0, str(root))
    try:
        yield imported
    finally:
        sys.path.remove(str(root))
        imported.update({n: m for n, m in sys.modules.items() if _is_tests(n) and _inside(m, root)})
        if foreign:
            for name in imported:
                sys.modules.pop(name, None)
            sys.modules.update(foreign)


def _is_tests(name: str) -> bool:
    return name == "tests" or name.startswith("tests.")


def _inside(module: Any, root: Path) -> bool:
    try:
        paths = list(getattr(module, "__path__", []) or []) + [getattr(module, "__file__", None) or ""]
    except KeyError:
        # A namespace package recomputes its path from its parent in sys.modules, which the
        # loop that sets packages aside may already have removed: such a package is not the checkout's.
        return False
    return any(p and Path(p).resolve().is_relative_to(root) for p in paths)


def _seed_testers(modules) -> None:
    """Upstream testers draw ids from an unseeded `global_rng`; seed it so a build is reproducible."""
    import torch

    random.seed(0)
    torch.manual_seed(0)
    for module in modules:
        rng = getattr(module, "global_rng", None)
        if isinstance(rng, random.Random):
            rng.seed(0)


def _tear_down(test: unittest.TestCase) -> None:
    try:
        test.tearDown()
    except Exception as exc:  # cleanup only; the build already has its result
        logger.debug("tearDown of %s raised %s", type(test).__name__, exc)


def _family(cls: type, generative: bool) -> str:
    """A best guess of the family from the class alone (the tester is not run for a listing)."""
    main_input = getattr(cls, "main_input_name", "input_ids")
    config_class = getattr(cls, "config_class", None)
    sub_configs = set(getattr(config_class, "sub_configs", {}) or {})
    if "text_config" in sub_configs and sub_configs & {"vision_config", "audio_config"}:
        return "multimodal"
    if main_input in _AUDIO_INPUTS:
        return "audio"
    if main_input == "pixel_values":
        return "vision"
    params = inspect.signature(cls.forward).parameters
    if "decoder_input_ids" in params:
        return "encoder-decoder"
    # A cache without an `is_decoder` switch in the config: a decoder-only stack (Llama), not BERT.
    switchable = config_class is not None and "is_decoder" in inspect.signature(config_class.__init__).parameters
    if generative or ("past_key_values" in params and not switchable):
        return "decoder"
    return _family_from_name(cls.__name__)


def _family_from_name(name: str) -> str:
    return "decoder" if name.endswith(("ForCausalLM", "LMHeadModel")) else "text-encoder"


def _listed_names(path: Path) -> list[str]:
    """Model class names in `all_model_classes = (...)` assignments, read with the AST (import failed)."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "all_model_classes" for t in node.targets
        ):
            value = node.value.body if isinstance(node.value, ast.IfExp) else node.value
            if isinstance(value, (ast.Tuple, ast.List)):
                names += [e.id for e in value.elts if isinstance(e, ast.Name) and e.id not in names]
    return names
