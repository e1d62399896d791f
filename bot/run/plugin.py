"""The pytest plugin (`-p bot.run.plugin`): one test item per cell of a run plan, JUnit per docs/outcomes.md, crash and hang isolation.

A cell runs in its item's *setup*, so pytest's junitxml writes errors (build, harness, timeout)
as `<error>` and conformance failures, raised from the *call*, as `<failure>`. Each item's
node id is the cell id itself, so the JUnit `classname` is the model class and `name` the cell name.
Under pytest-xdist a worker killed by a native crash is replaced and its cell becomes an
`<error>` of kind `crash` (or `timeout`, when pytest-timeout's thread method killed it).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

import pytest
from _pytest._code.code import ExceptionChainRepr, ReprFileLocation, ReprTracebackNative

from bot.cells import Cell
from bot.outcomes import NOT_BUILDABLE_PROPERTY, Status
from bot.run import memory
from bot.run.controller import Controller, WorkerState, timeout_message
from bot.run.junit import cell_properties, run_properties
from bot.run.plan import PLAN_SUFFIX, RunPlan, read_plan
from bot.run.shard import estimate

logger = logging.getLogger(__name__)

_PLAN = pytest.StashKey[RunPlan]()
_PLAN_PATH = pytest.StashKey[Path]()
_RECORDER = pytest.StashKey[object]()
TIMEOUT_PREFIX = "Timeout ("  # pytest-timeout's `Timeout (>Ns) from pytest-timeout.`


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("export-bot", "export-bot conformance cells")
    group.addoption(
        "--export-plan", default=None, metavar="FILE", help=f"run plan (*{PLAN_SUFFIX}) written by export-bot run"
    )
    group.addoption("--export-progress", action="store_true", help="progress line and summary table on stderr")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("export_plan")
    if not path:
        return
    path = Path(path).resolve()
    config.stash[_PLAN] = plan = read_plan(path)
    config.stash[_PLAN_PATH] = path
    if plan.footprints:
        # Before anything imports transformers: its modules are instrumented as they are imported.
        from bot.run.footprint import Recorder, roots_for

        config.stash[_RECORDER] = recorder = Recorder(roots_for(plan.source))
        recorder.install()
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(WorkerState(state_dir(path), config.workerinput["workerid"]), "export-bot-worker")
    else:
        config.pluginmanager.register(Controller(config, plan, state_dir(path)), "export-bot-controller")


def state_dir(plan_path: Path) -> Path:
    return plan_path.parent / (plan_path.name + ".state")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _PLAN_PATH in parent.config.stash and file_path.resolve() == parent.config.stash[_PLAN_PATH]:
        return CellsFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _PLAN not in config.stash:
        return
    # Longest first, so parallel workers finish together (the plan's order breaks ties).
    durations = config.stash[_PLAN].durations
    items.sort(key=lambda item: -estimate(item.cell, durations) if isinstance(item, CellItem) else 0.0)


class CellsFile(pytest.File):
    """The plan file as a pytest "module": one item per cell."""

    def collect(self):
        plan = self.config.stash[_PLAN]
        runner = CellRunner(plan, self.config.stash.get(_RECORDER, None))
        runner.warm_up()
        for cell in plan.cells:
            yield CellItem.from_parent(self, name=cell.name, nodeid=cell.id, cell=cell, runner=runner)


class CellRunner:
    """The model source and skiplists a worker loads once and shares across its cells."""

    def __init__(self, plan: RunPlan, recorder=None):
        self.plan = plan
        self.recorder = recorder  # bot/run/footprint.Recorder when the plan records footprints
        self._loaded: tuple | None = None

    def load(self):
        if self._loaded is None:
            from bot.models.sources import get_source
            from bot.skiplist.model import load_skiplists

            source = get_source(self.plan.source)  # it sets RUN_SLOW before importing a judging checkout's tests
            self._loaded = (source, load_skiplists(self.plan.skiplists))
        return self._loaded

    def warm_up(self) -> None:
        """Import the heavy libraries during collection, outside every cell's timeout and timings.

        A problem here is left for each cell to report (as a harness error), never a lost collection.
        """
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401

            import bot.run.execute  # noqa: F401

            source = self.load()[0]
            source.classes()
            warm = getattr(source, "warm_up", None)  # a source that imports per class: those of this plan
            if callable(warm):
                warm(dict.fromkeys(cell.model_class for cell in self.plan.cells))
        except Exception as exc:
            logger.warning("warming up the model source failed (each cell will report it): %s", exc)

    def execute(self, cell: Cell):
        from bot.run.checkout_tests import execute_by_checkout, judged_by_checkout
        from bot.run.execute import execute_cell

        source, skiplists = self.load()
        measured = memory.reset_peak()  # the cell's own peak, not the worker's so far (bot/run/memory.py)
        cpu = time.process_time()
        if self.recorder is not None:
            self.recorder.start()
        if judged_by_checkout(source):  # the checkout's own export test judges, not the bot's rules
            run = execute_by_checkout(cell, source, self.plan.skiplists, probe=self.plan.probe)
        else:
            run = execute_cell(cell, source, skiplists, probe=self.plan.probe, rules=self.plan.rules)
        run = replace(run, cpu_seconds=time.process_time() - cpu)
        if self.recorder is not None:
            run = replace(run, footprint=self.recorder.stop())
        peak = memory.peak_bytes() if measured else None
        return run if peak is None else replace(run, artifact={**run.artifact, "peak_rss_bytes": peak})


class CellOutcome(Exception):
    """Carries a failed or errored cell's message and traceback to the report."""

    def __init__(self, cell: Cell, message: str, details: str):
        super().__init__(message)
        self.cell, self.message, self.details = cell, message, details


class CellItem(pytest.Item):
    def __init__(self, *, cell: Cell, runner: CellRunner, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self.runner = runner
        self.run = None
        self.extra_keyword_matches.update({cell.model_class, cell.backend, cell.shape, cell.path})

    def reportinfo(self):
        return self.path, None, self.cell.id

    def setup(self) -> None:
        plan = self.runner.plan
        self.user_properties.extend(cell_properties(self.cell))
        try:
            run = self.runner.execute(self.cell)
        except Exception as exc:  # the harness's own bug, or a source that cannot load: never a lost cell
            import traceback

            self.user_properties.append(("kind", "harness"))
            raise CellOutcome(
                self.cell, f"{type(exc).__name__}: {exc}".splitlines()[0], traceback.format_exc()
            ) from exc
        self.run = run
        # cell_properties said probe=false before the run; a probe is only known now.
        if run.probe:
            self.user_properties[:] = [(k, v) for k, v in self.user_properties if k != "probe"] + [("probe", "true")]
        self.user_properties.extend(run_properties(run))
        if run.status is Status.PASSED_UNCOMPARED:
            self.user_properties.append(("exactness", run.exactness_scope or "unknown"))
        if run.status is Status.NOT_BUILDABLE:
            # A skip to pytest and to any JUnit reader; the controller types the element `not-buildable`.
            self.user_properties.append((NOT_BUILDABLE_PROPERTY, "true"))
            pytest.skip(run.message or "not buildable by this source")
        if run.status is Status.SKIPPED:
            pytest.skip(run.message or run.skip_scope or "skipped")
        if run.status is Status.ERROR:
            raise CellOutcome(self.cell, run.message, run.details)
        logger.debug("%s: %s (probe=%s)", self.cell.id, run.status.value, plan.probe)

    def runtest(self) -> None:
        if self.run is not None and self.run.status is Status.FAILED:
            raise CellOutcome(self.cell, self.run.message, self.run.details)


def _longrepr(location: str, message: str, details: str) -> ExceptionChainRepr:
    """A report body that junitxml turns into `message="<message>"` with `details` as the text.

    A real ExceptionRepr (not a string), so it survives xdist's report serialisation intact.
    """
    lines = (details or message).splitlines(keepends=True)
    return ExceptionChainRepr([(ReprTracebackNative(lines), ReprFileLocation(location, 0, message), None)])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if not isinstance(item, CellItem) or call.excinfo is None:
        return report
    exc = call.excinfo.value
    if isinstance(exc, CellOutcome):
        report.longrepr = _longrepr(item.cell.id, exc.message, exc.details)
    elif isinstance(exc, pytest.fail.Exception) and str(exc).startswith(TIMEOUT_PREFIX):
        # pytest-timeout's signal method (in-process runs) raised inside the cell.
        item.user_properties.append(("kind", "timeout"))
        seconds = item.runner.plan.cell_timeout
        report.longrepr = _longrepr(item.cell.id, timeout_message(seconds), str(report.longrepr))
    return report
