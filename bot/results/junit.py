"""Read JUnit XML into cell results with lxml: the one module that parses JUnit."""

from __future__ import annotations

import gc
import logging
import threading
from pathlib import Path
from typing import Iterable, Sequence, Union

from lxml import etree

from bot.cells import Cell
from bot.outcomes import CellResult, Status
from bot.results.convert import TYPED, build_result, cell_of, components_of, suite_info
from bot.results.model import Problem, ResultSet

log = logging.getLogger(__name__)

# A failure's element wins over an error's, an error's over a skip's (pytest writes a teardown
# `<error>` beside the test's `<failure>`; the failure is what the cell did).
_RESULT_RANK = {"failure": 0, "error": 1, "skipped": 2}
_STATUS = {"failure": Status.FAILED, "error": Status.ERROR, "skipped": Status.SKIPPED}
_PARSERS = threading.local()  # lxml parser objects must not be shared between threads
_RERUN = "re-run the job that wrote it, or pass the file it meant to write"


def read_results(paths: Sequence[Path | str], expect_shards: int | None = None) -> ResultSet:
    """Merge JUnit files (or folders of them) into one result set; never raises on bad input.

    A missing, empty, truncated or non-JUnit file, a cell found twice and a shard missing
    from `expect_shards` are all `Problem`s in the result, so the caller can still report.
    """
    reader = _Reader()
    # Tens of thousands of small objects and no cycles among them: the cyclic collector would
    # only re-scan them over and over while they are made.
    collecting = gc.isenabled()
    gc.disable()
    try:
        # One file at a time, parsed and walked in this thread. Parsing ahead in a second
        # thread was measured slower: walking a tree libxml2 built in another thread costs
        # about as much again as the parse it overlapped (benchmarks/postprocess.py).
        for path in _expand(paths, reader):
            reader.read_file(path, _load(path))
    finally:
        if collecting:
            gc.enable()
    if expect_shards is not None:
        reader.check_shards(expect_shards)
    return ResultSet(
        results=reader.results,
        problems=tuple(reader.problems),
        non_cells=tuple(reader.non_cells),
        suites=tuple(reader.suites),
        files=tuple(reader.files),
    )


_Loaded = Union[etree._Element, etree.XMLSyntaxError, OSError, None]


def _load(path: Path) -> _Loaded:
    """Parse one file; expected failures are returned as values for the reader to report."""
    try:
        # huge_tree: a long traceback in one text node must not trip libxml2's size guard.
        parser = getattr(_PARSERS, "parser", None)
        if parser is None:
            parser = _PARSERS.parser = etree.XMLParser(huge_tree=True, resolve_entities=False, no_network=True)
        return etree.parse(str(path), parser).getroot()
    except etree.XMLSyntaxError as exc:
        try:
            with path.open("rb") as stream:
                if not stream.read(4096).strip():
                    return None  # an empty file says more than libxml2's "Document is empty"
        except OSError as unreadable:
            return unreadable
        return exc
    except OSError as exc:
        return exc


def _expand(paths: Iterable[Path | str], reader: "_Reader") -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.rglob("*.xml"))
            if not found:
                reader.problem(str(path), None, "folder holds no *.xml file", _RERUN)
            files += found
        else:
            files.append(path)
    return files


class _Reader:
    """Accumulates results over files; each file is streamed and its elements freed as read."""

    def __init__(self) -> None:
        self.results: dict[Cell, CellResult] = {}
        self.problems: list[Problem] = []
        self.non_cells: list[str] = []
        self.suites: list[SuiteInfo] = []
        self.files: list[str] = []

    def problem(self, file: str, line: int | None, what: str, todo: str) -> None:
        log.warning("%s: %s", file, what)
        self.problems.append(Problem(file, line, what, todo))

    def read_file(self, path: Path, loaded: "_Loaded") -> None:
        name = str(path)
        self.files.append(name)
        root = loaded
        if isinstance(loaded, OSError):
            self.problem(name, None, f"cannot read the file ({loaded.strerror or loaded})", _RERUN)
            return
        if loaded is None:
            self.problem(name, None, "empty file: no JUnit XML in it", _RERUN)
            return
        if isinstance(loaded, etree.XMLSyntaxError):
            self._salvage(name, loaded)
            return
        if root.tag not in ("testsuites", "testsuite"):
            self.problem(name, 1, f"not JUnit XML: the root element is <{root.tag}>, not <testsuites> or <testsuite>", _RERUN)
            return
        for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
            props = suite.find("properties")
            cases = 0
            for case in suite.iterchildren("testcase"):
                self._read_case(case, name)
                cases += 1
            self.suites.append(suite_info(name, suite.get("name", ""), _properties(props), cases))

    def _salvage(self, name: str, error: etree.XMLSyntaxError) -> None:
        """A truncated file (a shard job that died mid-write): keep every testcase that was closed."""
        cases = 0
        try:
            for _, case in etree.iterparse(
                name, events=("end",), tag="testcase", huge_tree=True, resolve_entities=False, no_network=True
            ):
                self._read_case(case, name)
                cases += 1
        except etree.XMLSyntaxError:
            pass
        line = error.lineno or (error.position[0] if error.position else None)
        kept = f"; the {cases} testcases before it are kept" if cases else ""
        self.problem(name, line, f"truncated or malformed XML ({error.msg}){kept}", _RERUN)

    def _read_case(self, element, file: str) -> None:
        classname, case_name = element.get("classname", ""), element.get("name", "")
        cell = cell_of(classname, case_name)
        if cell is None:
            self.non_cells.append(f"{classname}::{case_name}")
            return
        props: dict[str, str] = {}
        outcome = None
        for child in element:
            tag = child.tag
            if tag == "properties":
                props = _properties(child)
            elif tag in _RESULT_RANK and (outcome is None or _RESULT_RANK[tag] < _RESULT_RANK[outcome.tag]):
                outcome = child
        earlier = self.results.get(cell)
        if earlier is not None:
            self.problem(
                file,
                element.sourceline,
                f"{cell.id} is also in {earlier.source}; the first result is kept",
                "each cell must come from one shard: check that no two jobs ran the same --shard",
            )
            return
        self.results[cell] = _result(cell, outcome, props, element.get("time"), file)

    def check_shards(self, expected: int) -> None:
        shards = {s.shard for s in self.suites if s.shard}
        if not shards:
            readable = len({s.file for s in self.suites})
            if readable < expected:
                self.problem(
                    "(shards)", None, f"expected {expected} shard files, read {readable}",
                    "check that every shard job finished and uploaded its JUnit",
                )
            return
        for index in range(1, expected + 1):
            if f"{index}/{expected}" not in shards:
                self.problem(
                    f"(shard {index}/{expected})", None, f"shard {index}/{expected} is missing: no file carries it",
                    "check that this shard job finished and uploaded its JUnit, then re-run the report",
                )
        for shard in sorted(shards - {f"{i}/{expected}" for i in range(1, expected + 1)}):
            self.problem(
                f"(shard {shard})", None, f"shard {shard} does not belong to a {expected}-shard run",
                "pass --expect-shards with the matrix size, and only that run's files",
            )


def _properties(element) -> dict[str, str]:
    if element is None or not len(element):
        return {}
    # Fast path for the usual `<property name=… value=…/>` spelling: `values()` reads both
    # attributes in one call, a measurable share of the reader's time at 30,000 cells.
    if element[0].keys() == ["name", "value"]:
        try:
            return dict([prop.values() for prop in element])
        except ValueError:
            pass  # a property spelled differently: read it the careful way
    return {prop.get("name"): prop.get("value", prop.text or "") for prop in element.iterchildren("property")}


# Enum members as plain module constants: `Status.X` goes through the enum's descriptor,
# a visible cost when it runs twice per cell for 60,000 cells.
_PASSED, _UNCOMPARED, _ERROR = Status.PASSED, Status.PASSED_UNCOMPARED, Status.ERROR


def _result(cell: Cell, outcome, props: dict[str, str], time: str | None, file: str) -> CellResult:
    get = props.get
    if outcome is None:
        status, message, details = (_UNCOMPARED if get("exactness") else _PASSED), "", ""
    else:
        status = _STATUS[outcome.tag]
        details = outcome.text or ""
        message = outcome.get("message") or details.strip().partition("\n")[0]
    try:
        duration = float(time) if time else None
    except ValueError:
        duration = None
    kind = None
    if status is _ERROR:
        kind = get("kind") or "harness"  # a plain pytest `<error>`: setup or teardown broke, not the export
    components = get("components")
    probe = get("probe")
    return build_result(
        cell=cell,
        status=status,
        stage=get("stage") or None,
        kind=kind,
        message=message,
        details=details,
        skip_scope=get("skip_scope") or None,
        exactness_scope=get("exactness") or None,
        probe=probe is not None and probe.lower() == "true",
        duration=duration,
        components=components_of(components) if components else (),
        # Only what no typed field holds (per-stage timings, per-component status, toggles):
        # the rest is in the cell and the fields above, and 30,000 copies of it cost ~80 MB.
        properties=tuple([item for item in props.items() if item[0] not in TYPED]),
        source=file,
    )
