"""A cell judged by the checkout's own export test: its test method for the cell's variant, narrowed to one model class.

When `--source transformers-tests:PATH` names a checkout that holds `tests/exporters/test_export.py`,
no judging rule of the bot's applies (docs/runner.md, the checkout judges): the cell's test
method (`ModelClass::test_name` is the method's own name) runs under the unittest protocol on
the test class that covers the model class; after the class's own `setUp()`, the instance's
`all_model_classes` (and, on the generate path, `all_generative_model_classes`) are narrowed to
that one class. Each `subTest` is a component;
the outcome is the method's. The module's skip tables are replaced by the repository's TOML
skiplists before any test runs, so the checkout's own scope walk decides.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import time
import traceback
import unittest
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bot.cells import Cell
from bot.models.sources.base import NotBuildable
from bot.models.sources.transformers_tests import EXPORT_MODULE
from bot.outcomes import Status
from bot.run import observed_walk
from bot.run.checkout_stage import failed_stage, inside
from bot.run.observed_walk import SKIP_METHOD, TABLE, WalkRecorder, recording
from bot.skiplist.model import load_skiplist

JUDGE_PREFIX = "checkout:"  # the `judge` property of a cell the checkout's test judged
MAX_WARNINGS = 5  # warnings kept per cell, each on one line
# A warning the checkout's `_should_skip` raises for its caller (`stacklevel=2`) names the frame that
# watches it (bot/run/observed_walk.py) as its place: the checkout's own word all the same.
# Likewise a warning raised for the caller of a `@contextmanager` (upstream's `_tolerating_executorch_limits`)
# names contextlib's frame.
STAND_INS = frozenset({observed_walk.__file__, contextlib.__file__})


def judged_by_checkout(source: Any) -> bool:
    """A transformers-tests source whose checkout holds the export test module."""
    root = getattr(source, "root", None)
    return str(getattr(source, "spec", "")).startswith("transformers-tests:") and bool(
        root and (Path(root) / EXPORT_MODULE).is_file()
    )


class _Result(unittest.TestResult):
    """Records what the unittest protocol reports: each subTest, the test's skip, failure or error.

    A failure keeps the stage it happened in (bot/run/checkout_stage.py), read from the frames of
    `origin` (the checkout's tests folder) in its traceback.
    """

    def __init__(self, origin: Path | None = None) -> None:
        super().__init__()
        self.origin = origin
        self.subtests: list[tuple[str, str, str, str, str | None]] = []  # (component, status, message, details, stage)
        self.raised: list[
            tuple[str, str, str | None]
        ] = []  # outside any subTest: (`Type: first line`, traceback, stage)

    def addSubTest(self, test, subtest, err):  # noqa: N802 (unittest's protocol)
        name = _component(subtest)
        if err is None:
            self.subtests.append((name, "passed", "", "", None))
        else:
            self.subtests.append((name, "failed", *self._failure(err)))
        super().addSubTest(test, subtest, err)

    def addSkip(self, test, reason):  # noqa: N802 (unittest's protocol)
        if getattr(test, "test_case", None) is not None:  # a skip inside a subTest: that component only
            self.subtests.append((_component(test), "skipped", reason, "", None))
        super().addSkip(test, reason)

    def addFailure(self, test, err):  # noqa: N802 (unittest's protocol)
        self.raised.append(self._failure(err))
        super().addFailure(test, err)

    def addError(self, test, err):  # noqa: N802 (unittest's protocol)
        self.raised.append(self._failure(err))
        super().addError(test, err)

    def _failure(self, err) -> tuple[str, str, str | None]:
        details = "".join(traceback.format_exception(*err))
        return _describe(err[1]), details, failed_stage(err[2], self.origin)


def _component(subtest: unittest.TestCase) -> str:
    """The subTest's own label (`LlamaForCausalLM/prefill`), or its parameters when it has none."""
    message = getattr(subtest, "_message", None)
    if isinstance(message, str) and message:
        return message
    params = getattr(subtest, "params", None) or {}
    return ",".join(f"{key}={value}" for key, value in params.items()) or subtest.id()


def _describe(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__


@dataclass(frozen=True)
class CheckoutVerdict:
    """What the checkout's test said about one cell, before it becomes a CellRun."""

    status: Status
    message: str = ""
    details: str = ""
    component: str | None = None  # the failing subTest
    stage: str | None = None  # where it failed (bot/run/checkout_stage.py); None: the frames do not say
    components: tuple[tuple[str, str, str], ...] = ()  # (name, status, message) per subTest
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    setup_seconds: float = 0.0  # of `seconds`, in the tester's own `setUp()`
    skip_scope: str | None = None  # the scope of the checkout's walk that passed over the class
    compared: str | None = None  # `tolerated`: the test passed without running the exported program
    walk: tuple[str, ...] = ()  # bot/run/observed_walk.py
    gate_walk: tuple[str, ...] = ()
    gate_scope: str | None = None


def narrowed(test_class: type, model_class: type, *, generate: bool, recorder: WalkRecorder | None = None) -> type:
    """The test class covering only `model_class`: its own `setUp()` first, then the narrowing, on the instance.

    The narrowing observes the tester rather than re-creating it. Testers that infer their classes
    in `setUp()` (upstream's `CausalLMModelTest`) refuse a test class that sets `all_model_classes`
    itself, and a class attribute would also hide what `setUp()` derives from the full list (the
    pipeline mapping). So the tester's `setUp()` runs unchanged, on the class as written; then the
    instance's `all_model_classes` becomes the one class. `all_generative_model_classes` is most
    often a property of the mixin that filters `all_model_classes` (left as the tester derives it);
    where a tester spells it out, it becomes the one class on the generate path, none otherwise.
    With a `recorder`, the class's own `_should_skip` is watched, never replaced (bot/run/observed_walk.py).
    """

    def setUp(self) -> None:  # noqa: N802 (unittest's protocol)
        start = time.perf_counter()
        test_class.setUp(self)
        if recorder is not None:
            recorder.setup_seconds += time.perf_counter() - start
        self.all_model_classes = (model_class,)
        if not _derived(test_class, "all_generative_model_classes"):
            self.all_generative_model_classes = (model_class,) if generate else ()

    attributes = {"setUp": setUp, "__module__": test_class.__module__, "__qualname__": test_class.__qualname__}
    should_skip = getattr(test_class, SKIP_METHOD, None)
    if recorder is not None and callable(should_skip):
        attributes[SKIP_METHOD] = recorder.wrap(should_skip)
    return type(test_class.__name__, (test_class,), attributes)


def _derived(test_class: type, name: str) -> bool:
    """Whether the class computes `name` (a property or other data descriptor) rather than holding it."""
    return hasattr(type(inspect.getattr_static(test_class, name, None)), "__set__")


def run_method(test_class: type, method: str, origin: Path | None = None) -> CheckoutVerdict:
    """Run one test method under the unittest protocol and read its outcome, components and warnings.

    With `origin` (the checkout's tests folder), only the warnings the checkout's own code raised
    are kept: the test's word, not the libraries' deprecation notices.
    """
    result = _Result(origin)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        test_class(method).run(result)
    seconds = time.perf_counter() - start
    said = tuple(
        dict.fromkeys(
            f"{w.category.__name__}: {str(w.message).splitlines()[0]}"
            for w in caught
            if str(w.message) and (origin is None or inside(w.filename, origin) or w.filename in STAND_INS)
        )
    )
    components = tuple((name, status, message) for name, status, message, _, _ in result.subtests)
    common = {"components": components, "warnings": said[:MAX_WARNINGS], "seconds": seconds}
    for name, status, message, details, stage in result.subtests:
        if status == "failed":
            return CheckoutVerdict(Status.FAILED, message, details, component=name, stage=stage, **common)
    for message, details, stage in result.raised:  # outside any subTest: the test itself
        return CheckoutVerdict(Status.FAILED, message, details, stage=stage, **common)
    if result.skipped and not any(status != "skipped" for _, status, _ in components):
        return CheckoutVerdict(Status.SKIPPED, result.skipped[0][1], **common)
    return CheckoutVerdict(Status.PASSED, **common)


def install_tables(namespace: Mapping[str, Any], skiplists_dir: Path | str) -> dict[str, str]:
    """Replace each skip table of the checkout's export module by the TOML skiplist of the same name, in place.

    `EXPORT_SKIPS` ← `export_skips.toml`, `ONNX_DISABLE_OPTIMIZE` ← `onnx_disable_optimize.toml`, and
    any other module-level table (an upper-case dict) whose lower-case name has a TOML file (its
    values reasons, or arrays of names as `skiplist import` writes them, installed as tuples). In
    place, so every function of the module (and whoever imported the table) sees the same tables.
    `namespace` is the module's globals. Returns table name → the file that now drives it.
    """
    folder = Path(skiplists_dir)
    installed = {}
    for name, table in list(namespace.items()):
        if not (name.isupper() and isinstance(table, dict)):
            continue
        path = folder / f"{name.lower()}.toml"
        if not path.is_file():
            continue
        scopes = load_skiplist(path, names=True).scopes
        table.clear()
        table.update({scope: dict(classes) for scope, classes in scopes.items()})
        installed[name] = path.name
    return installed


def tables_of(namespace: Mapping[str, Any]) -> dict[str, Mapping[str, Mapping[str, str]]]:
    """The module's skip tables: upper-case dicts of scope → {model class: reason}."""
    return {
        name: value
        for name, value in namespace.items()
        if name.isupper()
        and isinstance(value, dict)
        and all(isinstance(k, str) and isinstance(v, dict) for k, v in value.items())
    }


def skip_reason(namespace: Mapping[str, Any], model_class: str) -> str:
    """Where the checkout's tables list a class that its test passed over (said, never decided, here)."""
    found = [
        f"{name}[{scope!r}]: {classes[model_class]}"
        for name, table in tables_of(namespace).items()
        for scope, classes in table.items()
        if model_class in classes
    ]
    return "; ".join(found[:3])


def method_globals(test_class: type, method: str, modules: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The globals of the module that defines the test method: the tables it reads.

    Decorators keep the method's `__module__` (parameterized's expansion does not keep `__wrapped__`);
    `modules` are the checkout's modules the source imported (set aside from `sys.modules`).
    """
    name = getattr(getattr(test_class, method), "__module__", "")
    module = modules.get(name) or sys.modules.get(name)
    return vars(module) if module is not None else None


def judge_cell(
    cell: Cell,
    test_class: type,
    model_class: type,
    skiplists_dir: Path | str,
    modules: Mapping[str, Any],
    *,
    probe: bool = False,
) -> tuple[CheckoutVerdict, bool]:
    """The cell's test method on the narrowed class, the module's tables replaced first; and whether it was a probe.

    A probe (`--probe`) runs a cell the checkout's own walk skipped by its skip table: the class is
    left out of `EXPORT_SKIPS` for this run only, and the test runs once more, so the checkout's own
    test says whether the entry is still needed. Only a cell the table really skipped is a probe;
    the same class listed under a scope this cell's walk never visits is not (its verdict stands).
    """
    module = method_globals(test_class, cell.name, modules)
    if module is not None:
        install_tables(module, skiplists_dir)
    verdict = _run(cell, test_class, model_class, module)
    skips = module.get("EXPORT_SKIPS") if module is not None else None
    if not probe or verdict.status is not Status.SKIPPED or not isinstance(skips, dict):
        return verdict, False
    listed = [classes.pop(cell.model_class) for classes in skips.values() if cell.model_class in classes]
    if not listed:
        return verdict, False
    again = _run(cell, test_class, model_class, module)
    # Still skipped without the entry: something else skipped it (a backend not installed), no probe.
    return (again, True) if again.status is not Status.SKIPPED else (verdict, False)


def node_id(test_class: type, method: str, root: Path | None) -> str | None:
    """The pytest node id of the checkout's test method (`tests/models/bert/test_modeling_bert.py::BertModelTest::…`).

    What a Transformers contributor runs to reproduce the cell; None when the class's file is not in the checkout.
    """
    try:
        path = Path(inspect.getsourcefile(test_class) or "").resolve()
    except (TypeError, OSError):
        return None
    if root is None or not path.is_relative_to(root):
        return None
    return f"{path.relative_to(root).as_posix()}::{test_class.__qualname__}::{method}"


# Upstream's words when it tolerates an ExecuTorch runtime limit: the test passes, the program never ran.
TOLERATED = "passes without running the program"


def _run(cell: Cell, test_class: type, model_class: type, module: Mapping[str, Any] | None) -> CheckoutVerdict:
    origin = Path(module["__file__"]).resolve().parents[1] if module and module.get("__file__") else None
    recorder = WalkRecorder()
    with recording(module, recorder):  # type: ignore[arg-type]
        test = narrowed(test_class, model_class, generate=cell.generate, recorder=recorder)
        verdict = run_method(test, cell.name, origin)
    observed = {
        "walk": recorder.skip_walk,
        "gate_walk": recorder.gate_walk,
        "gate_scope": recorder.gated_by(),
        "setup_seconds": recorder.setup_seconds,
    }
    if verdict.status is Status.PASSED and not verdict.components and module is not None:
        # The method covered the class and exported nothing: the checkout's scope walk passed over it.
        return _passed_over(cell, verdict, module, recorder, observed)
    compared = (
        "tolerated" if verdict.status is Status.PASSED and any(TOLERATED in w for w in verdict.warnings) else None
    )
    return replace(verdict, compared=compared, **observed)


def _passed_over(cell, verdict, module, recorder: WalkRecorder, observed: dict) -> CheckoutVerdict:
    """A test that exported nothing for the class: skipped, with the scope and the reason of the module's own table."""
    call = recorder.skipped_by()
    if call is not None and call.matched:
        reason = recorder.table.get(call.matched, {}).get(cell.model_class, "")
        message = f"{TABLE}[{call.matched!r}]: {reason}"
    elif call is not None:  # it said skip before consulting its table (a static cache the class cannot hold)
        message = f"the checkout's {SKIP_METHOD} passed over {cell.model_class} before its skip tables"
    else:
        message = skip_reason(module, cell.model_class) or "the checkout's test ran no component for this class"
    scope = call.matched if call is not None else None
    return CheckoutVerdict(
        Status.SKIPPED, message, warnings=verdict.warnings, seconds=verdict.seconds, skip_scope=scope, **observed
    )


def execute_by_checkout(cell: Cell, source: Any, skiplists_dir: Path | str, *, probe: bool = False):
    """The cell as a CellRun (bot/run/execute.py): what the checkout's test said, with the bot's bookkeeping only."""
    from bot.run.execute import CellRun, ComponentRun, build_error

    base = CellRun(cell, Status.PASSED, judge=JUDGE_PREFIX + EXPORT_MODULE.as_posix())
    start = time.perf_counter()
    try:
        test_class, model_class = source.test_class_for(cell.model_class, generate=cell.generate)
    except NotBuildable as exc:
        return CellRun(cell, Status.NOT_BUILDABLE, message=str(exc).splitlines()[0], judge=base.judge)
    except Exception as exc:  # the test module does not import: the source's setup problem
        return build_error(base, source, exc)
    if not callable(getattr(test_class, cell.name, None)):
        where = f"{test_class.__module__}.{test_class.__name__}"
        return CellRun(cell, Status.NOT_BUILDABLE, message=f"{where} has no test method {cell.name}", judge=base.judge)
    found = time.perf_counter() - start
    verdict, probed = judge_cell(cell, test_class, model_class, skiplists_dir, source.checkout_modules(), probe=probe)
    return CellRun(
        cell,
        verdict.status,
        message=verdict.message,
        details=verdict.details,
        components=tuple(ComponentRun(name, status, message) for name, status, message in verdict.components),
        # `build`: importing the test module and finding the class; `setup`: the tester's own `setUp()`;
        # `test`: the rest of the method (model build, export, run and compare, as the test does them).
        timings={"build": found, "setup": verdict.setup_seconds, "test": verdict.seconds - verdict.setup_seconds},
        judge=base.judge,
        warnings=verdict.warnings,
        failed_component=verdict.component,
        stage=verdict.stage,
        test_id=node_id(test_class, cell.name, getattr(source, "root", None)),
        probe=probed,
        skip_scope=verdict.skip_scope,
        compared=verdict.compared,
        walk=verdict.walk,
        gate_walk=verdict.gate_walk,
        gate_scope=verdict.gate_scope,
    )
