"""One cell, start to finish: build, eager reference, export by the real backend, run on its runtime, judge."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import sys
import time
import traceback
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bot import registry
from bot.cells import Cell, placed
from bot.models.sources.base import BuildError, ModelSource, NotBuildable, SetupProblem
from bot.outcomes import Status
from bot.profiles import RULES_PROFILE, judge_name
from bot.run import gates
from bot.skiplist.model import Skiplists

# torch, transformers and the backends are imported inside the functions that need them, so the
# harness can import these result types (and select cells) without paying for them.

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ComponentRun:
    """One exported graph of a cell: `passed`, `uncompared` (exactness scope), `failed` or `skipped` (runtime limit)."""

    name: str
    status: str
    message: str = ""


@dataclass(frozen=True)
class CellRun:
    """What running one cell did; the harness turns it into a JUnit testcase."""

    cell: Cell
    status: Status
    stage: str | None = None  # failures: build, capture, eager, export, run, compare
    kind: str | None = None  # errors: build
    message: str = ""  # `ExceptionType: first line`, or the skip reason
    details: str = ""  # the full traceback
    skip_scope: str | None = None  # skiplist scope (also kept on a probe), or `env:<why>`
    exactness_scope: str | None = None
    probe: bool = False  # a skiplisted cell run anyway
    components: tuple[ComponentRun, ...] = ()
    onnx_optimize: bool | None = None
    timings: Mapping[str, float] = field(default_factory=dict)  # seconds in build, eager, export, run, compare
    # A pass: what it compared, `values`, `names` or `count` (`none`: every component hit a runtime limit).
    compared: str | None = None
    setup_module: str | None = None  # a test module that does not import (the source's setup problem)
    setup_origin: str | None = None  # the file that raised while importing it
    # Who judged: the checkout's own export test (`checkout:tests/exporters/test_export.py`), else
    # the bot's rules profile (`rules:<profile>`, bot/profiles.py).
    judge: str | None = None
    warnings: tuple[str, ...] = ()  # the checkout's test's own warnings, one line each
    failed_component: str | None = None  # the subTest that failed, when the checkout's test judged
    test_id: str | None = None  # the checkout's test method that judged, as a pytest node id
    # The scopes the checkout's own skip logic looked up for this cell, in order, as the run observed
    # it (bot/run/observed_walk.py); those only a `runtime=True` call looked up gate part of the test.
    walk: tuple[str, ...] = ()
    gate_walk: tuple[str, ...] = ()
    gate_scope: str | None = None  # the gate scope that listed the class: exported, never driven
    # What the value comparisons measured, the worst over the components (bot/run/judge.Figures).
    figures: Any = None
    # What the exported artifacts measured, summed over the components (`measure` of bot/run/backends),
    # and the worker's peak resident memory so far: `artifact_bytes`, `onnx_nodes`, … (docs/rules.md).
    artifact: Mapping[str, float] = field(default_factory=dict)
    # The worker's CPU time while the cell ran (user and system, every thread): what the cell cost.
    cpu_seconds: float | None = None
    # The checkout's functions the cell executed, `PATH::QUALNAME` (bot/footprints.py), when the run records them.
    footprint: frozenset[str] = frozenset()


class _Clock:
    """Seconds per stage, and the stage currently running (the one a failure is charged to)."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = defaultdict(float)
        self.stage: str | None = None

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        self.stage, start = stage, time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] += time.perf_counter() - start


def describe(exc: BaseException) -> str:
    """`ExceptionType: first line` (docs/outcomes.md)."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip()}" if lines else type(exc).__name__


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def execute_cell(
    cell: Cell, source: ModelSource, skiplists: Skiplists, *, probe: bool = False, rules: str = RULES_PROFILE
) -> CellRun:
    """Run `cell` as the seed's test would, judged by the rules profile `rules`; never raises for what the cell does."""
    judge = judge_name(rules)
    if cell.axes or not placed(cell):  # a name the seed's rules do not know: only the checkout's own test can judge it
        unknown = (
            f"`{cell.axes}` axis" if placed(cell) else f"`{cell.backend}` backend" if cell.backend else "such test"
        )
        reason = f"the bot's rules ({rules}) have no {unknown}; only the checkout's own test can judge it"
        return CellRun(cell, Status.NOT_BUILDABLE, message=reason, judge=judge)
    explanation = skiplists.explain(cell)
    if explanation.skipped and not probe:
        return CellRun(
            cell, Status.SKIPPED, message=explanation.reason or "", skip_scope=explanation.scope, judge=judge
        )
    base = CellRun(
        cell,
        Status.PASSED,
        skip_scope=explanation.scope,
        exactness_scope=explanation.exactness_scope,
        probe=explanation.skipped,
        onnx_optimize=explanation.onnx_optimize,
        judge=judge,
    )
    clock = _Clock()
    with _hub_kernels_disabled():
        run = _execute(base, source, clock, optimize=explanation.onnx_optimize, probe=probe, rules=rules)
    return _with(run, timings=dict(clock.timings))


def _with(run: CellRun, **changes: Any) -> CellRun:
    return replace(run, **changes)


def _skipped(run: CellRun, gate: gates.Gate) -> CellRun:
    # Even on a probe the environment's reason wins: the cell did not run, so it says nothing
    # about whether its skiplist entry is still needed.
    return _with(run, status=Status.SKIPPED, message=gate.reason, skip_scope=gate.scope)


def _execute(
    run: CellRun, source: ModelSource, clock: _Clock, *, optimize: bool | None, probe: bool, rules: str
) -> CellRun:
    """The upstream test's order: its decorators (torch version, backend packages), then
    `_skip_if_not_exportable` and the static-cache check, and only then the model is built."""
    cell = run.cell
    gate = _torch_gate(cell.backend) or _backend_gate(cell.backend)
    if gate:
        return _skipped(run, gate)
    with clock("build"):
        try:
            target = _target(source, cell)
            if target is not None:
                gate = gates.model_gate(
                    cell, target.model_class, exportable=target.exportable, gate_class=target.gate_class
                )
                if gate:
                    return _skipped(run, gate)
            built = source.build(cell.model_class, generate=cell.generate)
        except NotBuildable as exc:
            # Not a failure of the class or the run: the reason, without a traceback (docs/outcomes.md).
            return _with(run, status=Status.NOT_BUILDABLE, message=_first_line(exc))
        except Exception as exc:  # a source that cannot build a class is an error, never a drop
            return build_error(run, source, exc)
    # A source without `target` is gated now; one with it may still learn in setUp() that the
    # tester turns test_torch_exportable off.
    gate = gates.model_gate(cell, built.model_class, exportable=built.exportable) if target is None else None
    if gate is None and not built.exportable:
        gate = gates.model_gate(cell, built.model_class, exportable=False)
    if gate:
        return _skipped(run, gate)
    try:
        with clock("build"):
            model, inputs = _prepare_model(cell, built)
        with clock("capture" if cell.generate else "build"):
            components = _components(cell, model, inputs)
        with clock("eager"):
            eager = {name: _eager_outputs(name, model, inputs) for name, (model, inputs) in components.items()}
    except Exception as exc:
        return _with(run, status=Status.FAILED, stage=clock.stage, message=describe(exc), details=_traceback(exc))
    return _export_and_judge(run, components, eager, clock, optimize=optimize, probe=probe, rules=rules)


def _target(source: ModelSource, cell: Cell):
    """What the gates read, from a source that can say it without building (else None: gates follow the build)."""
    target = getattr(source, "target", None)
    return target(cell.model_class, generate=cell.generate) if callable(target) else None


def build_error(run: CellRun, source: ModelSource, exc: BaseException) -> CellRun:
    if not isinstance(exc, BuildError):
        logger.warning(
            "%s: %s building %s (not a BuildError)", source.spec, describe(exc), run.cell.model_class, exc_info=True
        )
    if isinstance(exc, SetupProblem):
        # One cause for many cells: its original traceback, and which module and file, so the
        # run summary and the report can say it once.
        return _with(
            run,
            status=Status.ERROR,
            stage="build",
            kind="build",
            message=str(exc),  # already `ExceptionType: first line (where)`, the original error's
            details=exc.details,
            setup_module=exc.module,
            setup_origin=exc.origin,
        )
    failed = {"message": describe(exc), "details": _traceback(exc)}
    return _with(run, status=Status.ERROR, stage="build", kind="build", **failed)


def _export_and_judge(
    run: CellRun, components: dict, eager: dict, clock: _Clock, *, optimize: bool | None, probe: bool, rules: str
) -> CellRun:
    """Each component in turn, like the seed's subTests: one failing does not stop the others."""
    from bot.run.backends import RuntimeLimit, load_backend
    from bot.run.judge import rule_for

    cell = run.cell
    rule = rule_for(cell, rules, _dtype(components))
    compare_values = run.exactness_scope is None
    done: list[ComponentRun] = []
    figures = None
    artifact: dict[str, float] = {}
    failure: tuple[str, BaseException] | None = None
    limit: RuntimeLimit | None = None
    try:
        with clock("export"):  # importing the runtime library is the backend's cost
            backend = load_backend(cell.backend)
    except Exception as exc:  # installed (the package gate passed) but broken: the export fails
        return _with(run, status=Status.FAILED, stage="export", message=describe(exc), details=_traceback(exc))
    for name, (model, inputs) in components.items():
        try:
            with clock("export"):
                program = backend.export(model, inputs, dynamic=cell.dynamic, target=cell.target, optimize=optimize)
            with clock("measure"):
                _add(artifact, _measured(backend, program))
            with clock("run"):
                outputs = backend.run(program, inputs)
            with clock("compare"):
                verdict, measured = _judge_component(rule, outputs, eager[name], inputs, compare_values, probe)
            figures = measured.worse(figures) if measured is not None else figures
            done.append(ComponentRun(name, verdict))
        except RuntimeLimit as exc:
            # Upstream moves on to the next component: a runtime limit, not an export defect.
            limit = limit or exc
            done.append(ComponentRun(name, "skipped", str(exc)))
        except Exception as exc:
            failure = failure or (clock.stage, exc)
            done.append(ComponentRun(name, "failed", describe(exc)))
    run = _with(run, components=tuple(done), figures=figures, artifact={**artifact, **_peak_rss()})
    if failure:
        stage, exc = failure
        return _with(run, status=Status.FAILED, stage=stage, message=describe(exc), details=_traceback(exc))
    if any(component.status == "uncompared" for component in done):
        return _with(run, status=Status.PASSED_UNCOMPARED)
    # A runtime limit skips that component and the test goes on (upstream `continue`s); the cell
    # passes on what the other components showed, and says so when none compared anything.
    compared = rule.compare if any(component.status == "passed" for component in done) else "none"
    return _with(run, compared=compared)


def _judge_component(rule, outputs, expected, inputs, compare_values: bool, probe: bool):
    """The profile's judgement and what it measured; a probe also compares a cell its exactness scope excuses.

    That comparison is evidence about the exactness entry, not a verdict on the export: when
    it passes the cell is `passed` (the entry may go), when it fails the cell stays
    `passed-uncompared`, as it would have been without the probe.
    """
    from bot.run.judge import judge_measured

    if compare_values or not probe:
        return judge_measured(rule, outputs, expected, inputs, compare_values=compare_values)
    verdict = judge_measured(rule, outputs, expected, inputs, compare_values=False)
    if verdict[0] != "uncompared":
        return verdict
    try:
        return judge_measured(rule, outputs, expected, inputs, compare_values=True)
    except AssertionError:
        return "uncompared", None


def _measured(backend: Any, program: Any) -> dict[str, float]:
    """What the backend measures of its exported program; nothing when it cannot (a figure never fails a cell)."""
    measure = getattr(backend, "measure", None)
    if not callable(measure):
        return {}
    try:
        return dict(measure(program))
    except Exception:  # noqa: BLE001 - a measurement is a figure, never a verdict
        logger.debug("measuring the exported program failed", exc_info=True)
        return {}


def _add(total: dict[str, float], figures: Mapping[str, float]) -> None:
    for name, value in figures.items():
        total[name] = total.get(name, 0.0) + value


def _peak_rss() -> dict[str, float]:
    """The worker's peak resident memory so far (a ceiling on this cell's: workers run cells one after another)."""
    try:
        import resource
    except ImportError:  # Windows: no getrusage
        return {}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux, bytes on macOS
    return {"process_peak_rss_bytes": float(peak) * (1 if sys.platform == "darwin" else 1024)}


def _dtype(components: Mapping[str, tuple[Any, dict]]) -> Any:
    """The floating dtype the cell's models compute in (tolerances depend on it); float32 when none says."""
    import torch

    for model, _ in components.values():
        for parameter in getattr(model, "parameters", lambda: ())():
            if parameter.is_floating_point():
                return parameter.dtype
    return torch.float32


def warm_up(backend_names: Iterable[str] = ()) -> None:
    """Import the exporter stack (and the named backends' runtimes) ahead of the first cell.

    For the harness to call during collection, so a worker's first cell does not pay ~15 s of
    imports inside its timeout and timings. A backend whose package is missing is skipped by its
    cells (the upstream `require_<package>`); one that is installed but fails to import is left for
    its cells to report (as an export failure).
    """
    import transformers.exporters.utils  # noqa: F401
    import transformers.testing_utils  # noqa: F401

    from bot.run.backends import load_backend

    _torch_gate()  # imports the Dynamo exporter, which every backend builds on

    for name in backend_names:
        if _backend_gate(name):
            continue
        try:
            load_backend(name)
        except Exception as exc:
            logger.warning("backend %s does not import; its cells will fail at export: %s", name, describe(exc))


def _torch_gate(backend: str | None = None) -> gates.Gate | None:
    import torch
    from transformers.exporters.exporter_dynamo import DynamoExporter

    return gates.torch_gate(torch.__version__, DynamoExporter.min_versions["torch"], backend)


def _backend_gate(backend: str) -> gates.Gate | None:
    """transformers' own `is_<package>_available`, as the upstream `require_<package>` decorators ask."""
    from transformers.utils import import_utils

    def available(package: str) -> bool:
        check = getattr(import_utils, f"is_{package}_available", None)
        return bool(check()) if check is not None else importlib.util.find_spec(package) is not None

    return gates.backend_gate(backend, available)


def _device(cell: Cell) -> str:
    import torch

    declared = registry.BY_NAME.get(cell.backend)
    if (declared is not None and declared.cpu_only) or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def _prepare_model(cell: Cell, built: Any) -> tuple[Any, dict]:
    """The upstream `_prepare_export_model_and_inputs` up to the model: clean inputs, less-flaky settings, cast."""
    from transformers.exporters.utils import cast_leaf_tensors, module_device, module_dtype
    from transformers.testing_utils import set_config_for_less_flaky_test, set_model_for_less_flaky_test

    config = built.config
    inputs = clean_inputs_for_export(built.inputs, config)
    set_config_for_less_flaky_test(config)
    model = built.model_class(config).eval().to(_device(cell))
    set_model_for_less_flaky_test(model)
    return model, cast_leaf_tensors(inputs, dtype=module_dtype(model), device=module_device(model))


def _components(cell: Cell, model: Any, inputs: dict) -> dict[str, tuple[Any, dict]]:
    """The components to export; for a generate cell, captured from a `generate()` call (stage `capture`)."""
    from transformers import GenerationConfig
    from transformers.exporters.utils import decompose_for_generation, decompose_multimodal, is_multimodal

    if cell.generate:
        generation_config = GenerationConfig(cache_implementation="static") if cell.static_cache else None
        return decompose_for_generation(
            model, inputs, generation_config=generation_config, multi_token_decode=cell.dynamic
        )
    if is_multimodal(model):
        return decompose_multimodal(model, inputs)
    return {"model": (model, inputs)}


def clean_inputs_for_export(inputs: Mapping[str, Any], config: Any) -> dict[str, Any]:
    """The seed's `_clean_inputs_for_export`: drop None values and loss inputs; sets `config.return_loss = False`."""
    cleaned = {key: value for key, value in inputs.items() if value is not None}
    for key in ("labels", "future_values", "return_loss"):
        cleaned.pop(key, None)
    config.return_loss = False
    return cleaned


def _eager_outputs(name: str, model: Any, inputs: dict) -> dict:
    """The seed's `_collect_eager_outputs` for one component: seeded forward on a deep copy, its tensor leaves."""
    import copy

    import torch
    from transformers import set_seed
    from transformers.exporters.utils import get_leaf_tensors

    with torch.no_grad():
        set_seed(1234)
        outputs = get_leaf_tensors(model(**copy.deepcopy(inputs)))
    if not outputs:
        raise AssertionError(f"Eager outputs are empty for {name}.")
    return outputs


@contextlib.contextmanager
def _hub_kernels_disabled() -> Iterator[None]:
    """The seed's `disable_hub_kernels`: trace the pure-PyTorch path, never a Hub kernel.

    Kernels load lazily on the first eager forward, outside the exporter's own trace-time patch,
    so the whole cell is wrapped; `lazy_load_kernel` reads `hub_kernels`'s own binding, hence both.
    """
    from transformers.integrations import hub_kernels
    from transformers.utils import import_utils

    targets = [(hub_kernels, "is_kernels_available"), (import_utils, "is_kernels_available")]
    saved = [(obj, name, getattr(obj, name)) for obj, name in targets]
    for obj, name in targets:
        setattr(obj, name, lambda *args, **kwargs: False)
    try:
        yield
    finally:
        for obj, name, original in saved:
            setattr(obj, name, original)
