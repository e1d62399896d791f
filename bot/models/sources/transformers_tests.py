"""The `transformers-tests:PATH` model source: a Transformers checkout's model testers (docs/runner.md protocol).

Classes are listed from the test modules' text (`tester_text.py`); a test module is imported only
when one of its classes is built, once per process. A module that fails to import is one setup
problem (`SetupProblem`): the file that raised, the original traceback, for every cell of its classes.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import logging
import os
import random
import re
import sys
import traceback
import unittest
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.models.catalog import PRESETS as ZOO_PRESETS
from bot.models.index import installed_models_dir, read_all
from bot.models.sources.base import BuildError, Built, ClassInfo, NotBuildable, SetupProblem, SourceError, Target
from bot.models.sources.tester_text import (
    CheckoutText,
    TestClassText,
    dotted,
    family_from_text,
    generate_eligible,
    looks_generative,
)

logger = logging.getLogger(__name__)

_GLOB = "tests/models/*/test_modeling_*.py"


@dataclass(frozen=True)
class _Listing:
    """One test class listing one model class, as the text says."""

    path: Path  # the test module
    test_class: str
    generative: bool  # listed as generative by an eligible test class
    eligible: bool  # the test class runs generate export tests


@dataclass(frozen=True)
class CheckoutCheck:
    """The checkout against the transformers Python would import: versions and where it lives."""

    root: Path
    checkout_version: str | None  # `__version__` in the checkout's src/transformers/__init__.py
    installed_version: str | None
    installed_path: str | None  # the package folder `import transformers` resolves to

    @property
    def from_checkout(self) -> bool:
        return bool(self.installed_path) and Path(self.installed_path).resolve().is_relative_to(self.root)

    def describe(self) -> str:
        checkout = (
            f"checkout {self.root} holds transformers {self.checkout_version}"
            if self.checkout_version
            else f"checkout {self.root} has no src/transformers/__init__.py with a __version__"
        )
        if not self.installed_path:
            return f"{checkout}; no transformers is importable"
        installed = f"importing transformers {self.installed_version or '?'} from {self.installed_path}"
        if self.from_checkout:
            return f"{checkout}; {installed} (the checkout's own source)"
        differs = (
            ", a different version"
            if self.checkout_version and self.installed_version and self.checkout_version != self.installed_version
            else ""
        )
        return f"{checkout}; {installed}, not the checkout's source{differs}"


_VERSION = re.compile(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


def check_checkout(root: Path) -> CheckoutCheck:
    """Read both sides without importing transformers (its spec and metadata only)."""
    try:
        found = _VERSION.search((root / "src" / "transformers" / "__init__.py").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        found = None
    try:
        installed = importlib.metadata.version("transformers")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    try:
        spec = importlib.util.find_spec("transformers")
    except (ImportError, ValueError):
        spec = None
    origin = spec.origin if spec and spec.origin else None
    return CheckoutCheck(
        root, found.group(1) if found else None, installed, str(Path(origin).parent) if origin else None
    )


EXPORT_MODULE = Path("tests") / "exporters" / "test_export.py"


def slow_tests_on() -> None:
    """Upstream marks its export tests `@slow`, read when a test module is imported: set RUN_SLOW first.

    What an import without it makes of a test differs: upstream 5.23.0's `@slow` outside an
    expansion turns the name into a skipping function (a "test" to list) instead of a callable
    pytest mark (none), so the selection and the run would disagree about which tests exist.
    """
    os.environ["RUN_SLOW"] = "1"
    testing_utils = sys.modules.get("transformers.testing_utils")
    if testing_utils is not None and hasattr(testing_utils, "_run_slow_tests"):
        testing_utils._run_slow_tests = True


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
        self._text = CheckoutText(self.root)
        self._listing: dict[str, list[_Listing]] | None = None
        self._infos: list[ClassInfo] = []
        self._modules: dict[str, Any] = {}  # the checkout's `tests.*` modules imported so far
        self._failed: dict[Path, SetupProblem] = {}  # test module → why it does not import
        self._said: set[tuple[str, str]] = set()  # (file that raised, error) already logged
        self._checked: CheckoutCheck | None = None
        self._exports: dict[str, frozenset[str]] = {}  # model type → the names its modeling modules export
        self._covered: dict[type, tuple[tuple[type, ...], tuple[type, ...]]] = {}  # test class → after setUp

    def check(self) -> CheckoutCheck:
        """What the checkout and the importable transformers are; said once in the log."""
        if self._checked is None:
            self._checked = check_checkout(self.root)
            logger.info("transformers-tests: %s", self._checked.describe())
        return self._checked

    # ---- listing (text only) ----

    def classes(self) -> list[ClassInfo]:
        self._read()
        return list(self._infos)

    def presets(self) -> dict[str, tuple[str, ...]]:
        infos = self.classes()
        names = tuple(i.model_class for i in infos)
        generative = [i.model_class for i in infos if i.generative]
        forward = [i.model_class for i in infos if not i.generative]
        # The zoo's picks where the checkout has them; otherwise one forward and one generative class.
        smoke = tuple(n for n in ZOO_PRESETS["smoke"] if n in names) or tuple(forward[:1] + generative[:1])
        core = tuple(n for n in ZOO_PRESETS["core"] if n in names) or smoke
        return {"smoke": smoke, "core": core, "all": names}

    def _read(self) -> dict[str, list[_Listing]]:
        if self._listing is not None:
            return self._listing
        listing: dict[str, list[_Listing]] = {}
        infos: dict[str, ClassInfo] = {}
        for path in self._files:
            module = self._text.module(path)
            for test_class in module.classes:
                if not test_class.listed:
                    continue
                eligible = generate_eligible(self._text.ancestors(path, test_class.name))
                # A decoder-only stack: its test class lists a generative head and no `is_decoder` switch.
                listed = test_class.listed + self._inferred(path, test_class)
                decoder_stack = any(looks_generative(n) for n in listed) and not module.decoder_switch
                for name in listed:
                    listed_generative = (
                        name in test_class.generative if test_class.generative is not None else looks_generative(name)
                    )
                    generative = eligible and listed_generative
                    listing.setdefault(name, []).append(_Listing(path, test_class.name, generative, eligible))
                    if name not in infos or (generative and not infos[name].generative):
                        family = family_from_text(module.inputs, name, generative or decoder_stack)
                        infos[name] = ClassInfo(name, path.parent.name, generative, family)
        self._listing, self._infos = listing, list(infos.values())
        return listing

    def _inferred(self, path: Path, test_class: TestClassText) -> tuple[str, ...]:
        """The classes a causal-LM tester leaves to inference, as its base class's module defines them."""
        if not test_class.infer_from:
            return ()
        prefix = test_class.infer_from.removesuffix("Model")
        defined = self._defined(path.parent.name)
        return tuple(
            prefix + suffix
            for suffix in test_class.infer_suffixes
            if prefix + suffix in defined and prefix + suffix not in test_class.listed
        )

    def _defined(self, model_type: str) -> frozenset[str]:
        """The names `models/<type>/modeling_*.py` exports: the checkout's source first, else the installed one's."""
        if model_type not in self._exports:
            roots = [self.root / "src" / "transformers" / "models", installed_models_dir()]
            names: set[str] = set()
            for models in roots:
                files = sorted((models / model_type).glob("modeling_*.py")) if models else []
                for file in files:
                    try:
                        names.update(read_all(file.read_text(encoding="utf-8")))
                    except (OSError, UnicodeDecodeError):
                        continue
                if files:
                    break
            self._exports[model_type] = frozenset(names)
        return self._exports[model_type]

    # ---- building (imports the one module needed) ----

    def target(self, model_class: str, *, generate: bool) -> Target:
        test_class, cls = self._resolve(model_class, generate)
        first = next(iter(self._classes_of(test_class)[0]), cls)
        return Target(cls, bool(getattr(test_class, "test_torch_exportable", True)), first)

    def build(self, model_class: str, *, generate: bool) -> Built:
        test_class, cls = self._resolve(model_class, generate)
        where = f"{test_class.__module__}.{test_class.__name__}"
        test = test_class()
        _seed_testers(self._modules.values())
        try:
            test.setUp()
        except Exception as exc:
            raise BuildError(f"{where}.setUp() raised {type(exc).__name__}: {exc}") from exc
        try:
            if getattr(test, "model_tester", None) is None:
                raise BuildError(f"{where}.setUp() left no model_tester")
            if generate:
                config, inputs = test.prepare_config_and_inputs_for_generate()
            else:
                tester = test.model_tester
                if hasattr(tester, "prepare_config_and_inputs_for_model_class"):
                    config, inputs = tester.prepare_config_and_inputs_for_model_class(cls)
                else:
                    config, inputs = tester.prepare_config_and_inputs_for_common()
                inputs = test._prepare_for_class(inputs, cls)
        except BuildError:
            raise
        except Exception as exc:
            step = "prepare_config_and_inputs_for_generate()" if generate else "the model tester"
            raise BuildError(f"{where}: {step} raised {type(exc).__name__}: {exc}") from exc
        finally:
            _tear_down(test)
        exportable = bool(getattr(test, "test_torch_exportable", True))
        return Built(model_class=cls, config=config, inputs=dict(inputs), exportable=exportable)

    def warm_up(self, model_classes: Iterable[str]) -> None:
        """Import the test modules these classes need (collection time, outside every cell's timeout)."""
        listing = self._read()
        for path in dict.fromkeys(entry.path for name in model_classes for entry in listing.get(name, ())[:1]):
            try:
                self._import(path)
            except SetupProblem:
                pass  # said once by _import; each cell reports it

    def checkout_modules(self) -> dict[str, Any]:
        """The checkout's `tests.*` modules imported so far, by dotted name (kept out of `sys.modules`)."""
        return dict(self._modules)

    def test_methods(self, model_class: str) -> tuple[str, ...]:
        """The export test methods the checkout runs for this class: its forward test class's, then its generate one's.

        Imports the class's test module; raises SetupProblem when it does not import.
        """
        names: list[str] = []
        for generate in (False, True):
            try:
                test_class, _ = self._resolve(model_class, generate)
            except SetupProblem:
                raise
            except NotBuildable:
                continue
            names += [name for name in dir(test_class) if _export_test(test_class, name, generate=generate)]
        return tuple(dict.fromkeys(names))

    def test_class_for(self, model_class: str, *, generate: bool) -> tuple[type, type]:
        """The test class that serves this class on this path, and the model class object (imports its module)."""
        return self._resolve(model_class, generate)

    def _resolve(self, model_class: str, generate: bool) -> tuple[type, type]:
        """The test class that serves this class on this path, and the model class object.

        A class listed by several test classes: the forward path uses the first that lists it, the
        generate path the first whose test class runs generate export tests and lists it as generative.
        """
        entries = self._read().get(model_class)
        if not entries:
            # The checkout's relative folder: the reason groups cells in a PR comment, whatever runner wrote it.
            raise NotBuildable(
                f"no test class under the checkout's tests/models/ lists {model_class} in all_model_classes"
            )
        if generate:  # the test classes whose text says they serve generate first: fewer modules imported
            entries = sorted(entries, key=lambda entry: not entry.generative)
        problem: SetupProblem | None = None
        for entry in entries:
            try:
                module = self._import(entry.path)
            except SetupProblem as exc:
                problem = problem or exc
                continue
            served = self._served_in(module, entry.test_class, model_class, generate)
            if served is not None:
                return served
        if problem is not None:
            raise problem
        if generate:
            raise NotBuildable(
                f"no test class that runs the generate export tests (mixes in ExportGenerateTesterMixin) "
                f"lists {model_class} in all_generative_model_classes"
            )
        raise NotBuildable(f"{model_class} is listed in the test modules' text, but no imported test class lists it")

    def _served_in(self, module, test_class_name: str, model_class: str, generate: bool) -> tuple[type, type] | None:
        """The first of the module's test classes (the named one first) that serves the class on this path, and the class."""
        for test_class in _test_classes(module, test_class_name):
            covered, generative = self._classes_of(test_class)
            cls = next((c for c in covered if c.__name__ == model_class), None)
            if cls is None:
                continue
            if not generate:
                return test_class, cls
            eligible = generate_eligible(frozenset(k.__name__ for k in test_class.__mro__))
            if eligible and cls in generative:
                return test_class, cls
        return None

    def _classes_of(self, test_class: type) -> tuple[tuple[type, ...], tuple[type, ...]]:
        """The classes a test class covers once set up; once per test class, from a seeded setUp."""
        if test_class not in self._covered:
            _seed_testers(self._modules.values())
            self._covered[test_class] = _covered(test_class)
        return self._covered[test_class]

    def _import(self, path: Path):
        name = dotted(self.root, path)
        if name in self._modules:
            return self._modules[name]
        if path in self._failed:
            raise self._failed[path]
        if (self.root / EXPORT_MODULE).is_file():  # the checkout judges: its tests must import as they run
            slow_tests_on()
        with _checkout_tests_package(self.root, self._modules):
            try:
                module = importlib.import_module(name)
            except Exception as exc:
                problem = self._setup_problem(path, exc)
                self._failed[path] = problem
                cause = (problem.origin, describe_exception(exc))
                if cause in self._said:  # one cause, one traceback in the log
                    logger.warning("%s does not import: the same cause as above", problem.module)
                else:
                    self._said.add(cause)
                    logger.warning("%s\n%s", problem, problem.details)
                raise problem from None
        return module

    def _setup_problem(self, path: Path, exc: BaseException) -> SetupProblem:
        origin = _raising_file(exc, self.root) or path
        module = _relative(path, self.root)
        raised = _relative(origin, self.root)
        first = describe_exception(exc)
        where = f"{raised} raised it" if raised == module else f"{raised} raised it while importing {module}"
        self.check()
        message = f"{first} ({where}; the test module does not import, so its classes cannot be built)"
        return SetupProblem(message, origin=raised, module=module, details="".join(traceback.format_exception(exc)))


def describe_exception(exc: BaseException) -> str:
    """`ExceptionType: first line` (docs/outcomes.md)."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _raising_file(exc: BaseException, root: Path) -> Path | None:
    """The checkout file that raised: the innermost traceback frame inside the checkout's tests."""
    tests = root / "tests"
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve().is_relative_to(tests):
        return Path(exc.filename).resolve()
    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        file = Path(frame.f_code.co_filename)
        if file.is_absolute() and file.resolve().is_relative_to(tests):
            found = file.resolve()
    return found


def _export_test(test_class: type, name: str, *, generate: bool) -> bool:
    """An export test method of this path: named like a cell, or any test the checkout's export module defines.

    A test that names no backend (`test_precomputed_inputs_match_eager`) is collected only from
    the export module itself, so a model's own tests never become cells; it runs on the forward path.
    """
    if not name.startswith("test_") or ("_generate" in name) != generate:
        return False
    method = getattr(test_class, name, None)
    # Only a function of the checkout's tests is a test: not a flag (`test_torch_exportable = True`),
    # nor what a decorator made of the None `parameterized.expand` leaves in the original's place.
    # Upstream 5.23.0's `@slow` outside the expansion turns it into pytest's or unittest's own wrapper
    # function (its module is theirs), which pytest does not collect from the class.
    if not inspect.isfunction(method):
        return False
    module = getattr(method, "__module__", None) or ""
    if not _is_tests(module):
        return False
    return "_export" in name or module.split(".")[-2:] == ["exporters", "test_export"]


def _test_classes(module, preferred: str) -> list[type]:
    """The test class the text named first, then the module's other TestCase classes that list models."""
    found = []
    named = getattr(module, preferred, None)
    if isinstance(named, type):
        found.append(named)
    for obj in vars(module).values():
        if (
            isinstance(obj, type)
            and obj not in found
            and issubclass(obj, unittest.TestCase)
            and obj.__module__ == module.__name__
        ):
            found.append(obj)
    return found


def _covered(test_class: type) -> tuple[tuple[type, ...], tuple[type, ...]]:
    """`all_model_classes` and `all_generative_model_classes` as a test sees them: after `setUp()`.

    Upstream's causal-LM test classes leave `all_model_classes` None until `setUp()` copies the
    tester's (inferred) classes, so the class attribute alone would list nothing. `setUp()` runs
    only then (an integration test class, without the attribute, is never set up), and one that
    raises leaves the declared classes; the build then reports the error.
    """
    if not hasattr(test_class, "all_model_classes"):
        return (), ()
    try:
        test = test_class()
    except Exception:
        return _read_classes(test_class)
    declared = _read_classes(test)
    if declared[0]:
        return declared
    try:
        test.setUp()
    except Exception as exc:
        logger.debug("%s.setUp() raised %s; reading its declared classes", test_class.__name__, exc)
        return _read_classes(test)
    try:
        return _read_classes(test)
    finally:
        _tear_down(test)


def _read_classes(holder: Any) -> tuple[tuple[type, ...], tuple[type, ...]]:
    found = []
    for name in ("all_model_classes", "all_generative_model_classes"):
        try:
            found.append(tuple(getattr(holder, name, ()) or ()))
        except Exception:  # a property that needs what setUp makes
            found.append(())
    return found[0], found[1]


@contextmanager
def _checkout_tests_package(root: Path, kept: dict[str, Any]):
    """Import with `root` first on sys.path, so `tests` is the checkout's package and relative imports resolve.

    Another `tests` package (this bot's own, under pytest) is set aside while importing and put back
    after; the checkout's modules imported before (`kept`) are put back in place first, so shared
    helpers are imported once, and `kept` gains the ones imported now.
    """
    foreign = {n: m for n, m in sys.modules.items() if _is_tests(n) and not _inside(m, root)}
    for name in foreign:
        sys.modules.pop(name, None)
    sys.modules.update(kept)
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        sys.path.remove(str(root))
        kept.update({n: m for n, m in sys.modules.items() if _is_tests(n) and _inside(m, root)})
        if foreign:
            for name in list(sys.modules):
                if _is_tests(name):
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
