"""The controller side of the plugin: testsuite properties, crashed and timed-out cells, tidy messages, progress."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from _pytest.junitxml import xml_key

from bot.cells import Cell, CellIdError
from bot.outcomes import NOT_BUILDABLE_PROPERTY, NOT_BUILDABLE_TYPE, Status
from bot.run.junit import cell_properties, installed_versions, read_git_sha, source_checkout, suite_properties
from bot.run.plan import RunPlan
from bot.run.progress import Progress, ProgressWriter
from bot.run.provenance import installed_transformers
from bot.run.shard import estimate


def timeout_message(seconds: float) -> str:
    return f"Timeout: the cell ran longer than {seconds:g} s (--cell-timeout)"


def crash_message(worker: str) -> str:
    return (
        f"WorkerCrash: worker {worker} died while running the cell (a native crash: segfault, abort or out of memory)"
    )


def _not_buildable(report: pytest.TestReport) -> bool:
    # Pairs may arrive as lists from an xdist worker.
    return any(name == NOT_BUILDABLE_PROPERTY and value == "true" for name, value in report.user_properties)


class WorkerState:
    """Worker side: where the cell's timeout deadline is written, so the controller can tell a timeout kill from a crash."""

    def __init__(self, directory: Path, worker: str):
        self.path = directory / f"{worker}.json"
        directory.mkdir(parents=True, exist_ok=True)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_timeout_set_timer(self, item: pytest.Item, settings) -> None:
        # Returns None: pytest-timeout still installs its own timer after this records the deadline.
        if settings.timeout and settings.timeout > 0:
            deadline = time.time() + settings.timeout
            self.path.write_text(json.dumps({"nodeid": item.nodeid, "deadline": deadline, "timeout": settings.timeout}))


def crash_kind(state_file: Path, nodeid: str, now: float) -> tuple[str, float | None]:
    """`timeout` when the dead worker was past its deadline on this very cell, else `crash`."""
    try:
        state = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return "crash", None
    # The thread method calls os._exit at the deadline: the death is seen at or after it.
    if state.get("nodeid") == nodeid and now >= float(state["deadline"]) - 0.5:
        return "timeout", float(state["timeout"])
    return "crash", None


class Controller:
    """The process that writes the JUnit: testsuite properties, crash/timeout testcases, message tidying, progress."""

    def __init__(self, config: pytest.Config, plan: RunPlan, state: Path):
        self.config = config
        self.plan = plan
        self.state = state
        self.kinds: dict[str, tuple[str, str]] = {}  # crashed nodeid → (kind, message)
        self.phase: dict[str, Status] = {}
        self.started: dict[str, float] = {}
        self.setup: list[tuple[dict[str, str], str]] = []  # cells whose test module did not import
        self.tracebacks: dict[str, str] = {}  # that cause's error → its traceback, kept once
        self.writer = None
        if config.getoption("export_progress"):
            estimates = {cell.id: estimate(cell, plan.durations) for cell in plan.cells}
            self.writer = ProgressWriter(Progress(plan.cells, estimates), sys.stderr)

    def _xml(self):
        return self.config.stash.get(xml_key, None)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        xml = self._xml()
        if xml is None:
            return
        sha = read_git_sha(source_checkout(self.plan.source))
        tested = installed_transformers()  # the package the workers import, found without importing it
        versions = installed_versions()
        if tested.version:  # the found package's own version, even when a path shadows the installed one
            versions["transformers"] = tested.version
        for name, value in suite_properties(
            source=self.plan.source,
            shard=self.plan.shard,
            versions=versions,
            git_sha=sha,
            transformers_location=str(tested.location) if tested.location else None,
            transformers_sha=tested.sha,
        ):
            xml.add_global_property(name, value)
        checkout = _checkout_statement(self.plan.source)
        if checkout:
            # Said, not enforced: which transformers the checkout's testers ran against. Said on the
            # terminal too, before any cell, so a mismatch is read before its failures are.
            xml.add_global_property("source.checkout", checkout)
            if self.writer is not None:
                sys.stderr.write(f"{checkout}\n")
                sys.stderr.flush()

    def pytest_runtest_logstart(self, nodeid: str, location) -> None:
        self.started[nodeid] = time.monotonic()
        if self.writer is not None:
            try:
                self.writer.start(Cell.parse(nodeid, lenient=True))
            except CellIdError:
                pass

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched) -> None:
        worker = report.node.gateway.id
        kind, seconds = crash_kind(self.state / f"{worker}.json", crashitem, time.time())
        message = timeout_message(seconds) if kind == "timeout" else crash_message(worker)
        self.kinds[crashitem] = (kind, message)
        report.longrepr = f"{message}\n\n{report.longrepr}"

    def _probe(self, cell: Cell) -> bool:
        if not self.plan.probe:
            return False
        try:
            from bot.skiplist.model import load_skiplists

            return load_skiplists(self.plan.skiplists).explain(cell).skipped
        except ValueError:
            return False

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        try:
            cell = Cell.parse(report.nodeid, lenient=True)
        except CellIdError:
            return
        xml = self._xml()
        if report.when == "???":  # xdist's report for a cell whose worker died
            kind, message = self.kinds.get(report.nodeid, ("crash", crash_message("?")))
            if xml is not None:
                reporter = xml.node_reporter(report)
                reporter.nodes[-1].set("message", message)
                # No report carried a duration; the time until the death still balances later shards.
                reporter.duration = time.monotonic() - self.started.get(report.nodeid, time.monotonic())
                for name, value in cell_properties(cell, probe=self._probe(cell)) + [("kind", kind)]:
                    reporter.add_property(name, value)
            self._finish(cell, Status.ERROR)
            return
        if report.failed and report.when == "setup":
            self._note_setup(report)
        if report.failed and report.when == "setup" and xml is not None:
            # junitxml writes `failed on setup with "..."`; docs/outcomes.md wants the cell's own message.
            reprcrash = getattr(report.longrepr, "reprcrash", None)
            if reprcrash is not None:
                xml.node_reporter(report).nodes[-1].set("message", reprcrash.message)
        if report.skipped and _not_buildable(report) and xml is not None:
            xml.node_reporter(report).nodes[-1].set("type", NOT_BUILDABLE_TYPE)
        self._track(cell, report)

    def _track(self, cell: Cell, report: pytest.TestReport) -> None:
        if report.when == "setup":
            if report.skipped:
                self.phase[report.nodeid] = Status.NOT_BUILDABLE if _not_buildable(report) else Status.SKIPPED
            elif report.failed:
                self.phase[report.nodeid] = Status.ERROR
        elif report.when == "call":
            if report.failed:
                self.phase[report.nodeid] = Status.FAILED
            elif any(name == "exactness" for name, _ in report.user_properties):
                self.phase[report.nodeid] = Status.PASSED_UNCOMPARED
            else:
                self.phase[report.nodeid] = Status.PASSED
        elif report.when == "teardown":
            self._finish(cell, self.phase.pop(report.nodeid, Status.ERROR))

    def _finish(self, cell: Cell, status: Status) -> None:
        if self.writer is not None:
            self.writer.update(cell, status)

    def _note_setup(self, report: pytest.TestReport) -> None:
        from bot.setup_problems import MODULE

        properties = dict(report.user_properties)
        if MODULE not in properties:
            return
        reprcrash = getattr(report.longrepr, "reprcrash", None)
        message = reprcrash.message if reprcrash is not None else str(report.longrepr).splitlines()[0]
        self.setup.append((properties, message))
        self.tracebacks.setdefault(message.rsplit(" (", 1)[0], str(report.longrepr))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.setup:
            from bot.setup_problems import headline, setup_causes

            causes = setup_causes(self.setup)
            lines = [headline(causes)]
            for cause in causes:
                lines += ["", f"{cause.origin}:", self.tracebacks.get(cause.message, "").rstrip()]
            sys.stderr.write("\n".join(lines) + "\n")
            sys.stderr.flush()


def _checkout_statement(source: str) -> str | None:
    """For `transformers-tests:PATH`, what the checkout and the importable transformers are (no import)."""
    prefix = "transformers-tests:"
    if not source.startswith(prefix):
        return None
    from bot.models.sources.transformers_tests import check_checkout

    return check_checkout(Path(source[len(prefix) :]).expanduser().resolve()).describe()
