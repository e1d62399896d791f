"""Read JUnit XML into cell results, with lxml's iterparse: the one module that parses JUnit."""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

from lxml import etree

from bot.cells import Cell, CellIdError
from bot.outcomes import CellResult, Status
from bot.results.model import VERSION_KEYS, Problem, ResultSet, SuiteInfo

log = logging.getLogger(__name__)

# A failure's element wins over an error's, an error's over a skip's (pytest writes a teardown
# `<error>` beside the test's `<failure>`; the failure is what the cell did).
_RESULT_RANK = {"failure": 0, "error": 1, "skipped": 2}
_STATUS = {"failure": Status.FAILED, "error": Status.ERROR, "skipped": Status.SKIPPED}
_RERUN = "re-run the job that wrote it, or pass the file it meant to write"


def read_results(paths: Sequence[Path | str], expect_shards: int | None = None) -> ResultSet:
    """Merge JUnit files (or folders of them) into one result set; never raises on bad input.

    A missing, empty, truncated or non-JUnit file, a cell found twice and a shard missing
    from `expect_shards` are all `Problem`s in the result, so the caller can still report.
    """
    reader = _Reader()
    for path in _expand(paths, reader):
        reader.read_file(path)
    if expect_shards is not None:
        reader.check_shards(expect_shards)
    return ResultSet(
        results=reader.results,
        problems=tuple(reader.problems),
        non_cells=tuple(reader.non_cells),
        suites=tuple(reader.suites),
        files=tuple(reader.files),
    )


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


@lru_cache(maxsize=None)
def _cell(classname: str, name: str) -> Cell | None:
    # Cached: a base and a head set share nearly all ids, and parsing is most of the per-case cost.
    try:
        return Cell.from_testcase(classname, name)
    except CellIdError:
        return None


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

    def read_file(self, path: Path) -> None:
        name = str(path)
        self.files.append(name)
        try:
            with path.open("rb") as stream:
                head = stream.read(4096)
        except OSError as exc:
            self.problem(name, None, f"cannot read the file ({exc.strerror or exc})", _RERUN)
            return
        if not head.strip():
            self.problem(name, None, "empty file: no JUnit XML in it", _RERUN)
            return
        cases, suite_props, suite_name, suite_cases = 0, {}, "", 0
        context = etree.iterparse(name, events=("end",), tag=("testcase", "properties", "testsuite"), huge_tree=True)
        try:
            for _, element in context:
                tag = element.tag
                if tag == "testcase":
                    self._read_case(element, name)
                    cases += 1
                    suite_cases += 1
                    element.clear()
                    # Free the cases already read; the suite's own properties came before them.
                    parent = element.getparent()
                    while element.getprevious() is not None:
                        del parent[0]
                elif tag == "properties":
                    parent = element.getparent()
                    if parent is not None and parent.tag == "testsuite":
                        suite_props = {p.get("name"): p.get("value", p.text or "") for p in element}
                else:
                    self.suites.append(_suite(name, element.get("name", ""), suite_props, suite_cases))
                    suite_props, suite_cases = {}, 0
        except etree.XMLSyntaxError as exc:
            line = exc.lineno or (exc.position[0] if exc.position else None)
            kept = f"; the {cases} testcases before it are kept" if cases else ""
            self.problem(name, line, f"truncated or malformed XML ({exc.msg}){kept}", _RERUN)
            return
        root = context.root
        if root is None or root.tag not in ("testsuites", "testsuite"):
            found = f"<{root.tag}>" if root is not None else "nothing"
            self.problem(name, 1, f"not JUnit XML: the root element is {found}, not <testsuites> or <testsuite>", _RERUN)

    def _read_case(self, element, file: str) -> None:
        classname, case_name = element.get("classname", ""), element.get("name", "")
        cell = _cell(classname, case_name)
        if cell is None:
            self.non_cells.append(f"{classname}::{case_name}")
            return
        props: dict[str, str] = {}
        outcome = None
        for child in element:
            tag = child.tag
            if tag == "properties":
                for prop in child:
                    props[prop.get("name")] = prop.get("value", prop.text or "")
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


def _result(cell: Cell, outcome, props: dict[str, str], time: str | None, file: str) -> CellResult:
    if outcome is None:
        status, message, details = (Status.PASSED_UNCOMPARED if props.get("exactness") else Status.PASSED), "", ""
    else:
        status = _STATUS[outcome.tag]
        details = outcome.text or ""
        message = outcome.get("message") or details.strip().partition("\n")[0]
    try:
        duration = float(time) if time else None
    except ValueError:
        duration = None
    kind = props.get("kind")
    if status is Status.ERROR and not kind:
        kind = "harness"  # a plain pytest `<error>`: setup or teardown broke, not the export
    components = tuple(c for c in props.get("components", "").split(",") if c)
    return CellResult(
        cell=cell,
        status=status,
        stage=props.get("stage") or None,
        kind=kind if status is Status.ERROR else None,
        message=message,
        details=details,
        skip_scope=props.get("skip_scope") or None,
        exactness_scope=props.get("exactness") or None,
        probe=props.get("probe", "").lower() == "true",
        duration=duration,
        components=components,
        properties=tuple(props.items()),
        source=file,
    )


def _suite(file: str, name: str, props: dict[str, str], cases: int) -> SuiteInfo:
    versions = {k: props[k] for k in VERSION_KEYS if props.get(k)}
    versions.update({k[: -len("_version")]: v for k, v in props.items() if k.endswith("_version") and v})
    return SuiteInfo(
        file=file,
        name=name,
        shard=props.get("shard") or None,
        source=props.get("source") or None,
        git_sha=props.get("git_sha") or props.get("git-sha") or props.get("sha") or None,
        versions=versions,
        testcases=cases,
    )
