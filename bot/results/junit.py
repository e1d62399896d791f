"""Read one JUnit XML file with lxml into plain records: the one module that parses JUnit.

Records hold only builtins (str, int, None, tuples), as the file spells them; turning them
into cells and results is `merge.py`'s job.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from lxml import etree

from bot.files import read_bytes
from bot.outcomes import NOT_BUILDABLE_PROPERTY, NOT_BUILDABLE_TYPE
from bot.results.convert import TYPED, suite_info
from bot.results.model import Problem, SuiteInfo

# A failure's element wins over an error's, an error's over a skip's (pytest writes a teardown
# `<error>` beside the test's `<failure>`; the failure is what the cell did).
_RESULT_RANK = {"failure": 0, "error": 1, "skipped": 2}
RERUN = "re-run the job that wrote it, or pass the file it meant to write"


class CaseRecord(NamedTuple):
    """One `<testcase>` as read, typed properties picked out; every value as the file spells it."""

    classname: str
    name: str
    time: str | None
    outcome: str | None  # `failure`, `error`, `skipped`, `not-buildable`, or None for a pass
    message: str  # the outcome's `message`, or the first line of its text
    details: str  # the outcome's text: the traceback
    stage: str | None
    kind: str | None
    skip_scope: str | None
    exactness: str | None
    probe: str | None
    components: str | None
    extra: tuple[tuple[str, str], ...]  # properties no typed field holds (per-stage timings, …)


class FileRead(NamedTuple):
    """Everything one file gave: its testcases in order, its suites, and what was wrong with it."""

    file: str
    cases: list[CaseRecord]
    suites: list[SuiteInfo]
    problems: list[Problem]


def read_file(path: Path) -> FileRead:
    """Read one file; never raises for a missing, empty, truncated or non-JUnit file."""
    name = str(path)
    read = FileRead(name, [], [], [])
    events = _Events(read)
    try:
        # Read here, not by lxml: given a path, its target parser reports a missing file as nothing.
        data = read_bytes(path)  # a FIFO or a device is refused (exit 2), not read forever
        if not data or data.isspace():
            read.problems.append(Problem(name, None, "empty file: no JUnit XML in it", RERUN))
            return read
        # A parser target, not a tree: libxml2 hands over each element's tag and attributes,
        # and no tree is built, walked through one proxy object per element, then freed
        # (measured ~10 % less CPU at 30,000 cells). huge_tree: a long traceback in one text
        # node must not trip libxml2's size guard. Internal entities only: with none resolved,
        # libxml2 hands a parser target `&amp;` in an attribute as `&#38;` (a message `a & b`
        # read back as `a &#38; b`); external ones stay unresolved, and libxml2 caps amplification.
        parser = etree.XMLParser(target=events, huge_tree=True, resolve_entities="internal", no_network=True)
        etree.fromstring(data, parser)
    except _NotJUnit as root:
        what = f"not JUnit XML: the root element is <{root}>, not <testsuites> or <testsuite>"
        read.problems.append(Problem(name, 1, what, RERUN))
    except etree.XMLSyntaxError as error:
        # A truncated file (a shard job that died mid-write): every testcase closed before the
        # break was already recorded, and is kept.
        line = error.lineno or (error.position[0] if error.position else None)
        kept = f"; the {len(read.cases)} testcases before it are kept" if read.cases else ""
        read.problems.append(Problem(name, line, f"truncated or malformed XML ({error.msg}){kept}", RERUN))
    except OSError as error:
        read.problems.append(Problem(name, None, f"cannot read the file ({error.strerror or error})", RERUN))
    events.finish()
    return read


class _NotJUnit(Exception):
    """Raised from the parser target to stop at a root element that is not JUnit's."""


class _OpenSuite:
    """A `<testsuite>` being read: its direct testcases are counted, its place in the list kept."""

    __slots__ = ("name", "props", "cases", "place")

    def __init__(self, name: str, place: int) -> None:
        self.name, self.props, self.cases, self.place = name, {}, 0, place


class _Events:
    """lxml parser target: testcase records made from start/end events as libxml2 parses."""

    def __init__(self, read: FileRead) -> None:
        self.read = read
        self.root: str | None = None  # the root element's tag, once seen
        self.suites: list[_OpenSuite] = []  # innermost last
        self.case: dict | None = None  # the open testcase's attributes
        self.props: dict[str, str] | None = None  # where `<property>`s go: the open case's or suite's
        self.case_props: dict[str, str] = {}
        self.outcome: tuple[str, dict] | None = None  # the highest-ranked failure/error/skipped so far
        self.text: list[str] | None = None  # the text of the outcome (or property) being read
        self.property: str | None = None  # a property whose value is its text
        self.outcome_text = ""

    # `start` and `end` run for every element, ~28 times per testcase, so the common
    # `<property>` is tested first and returns at once.
    def start(self, tag: str, attrib) -> None:
        if tag == "property":
            props = self.props
            if props is not None:
                try:
                    props[attrib["name"]] = attrib["value"]
                except KeyError:  # `<property name="x">text</property>`, as some producers write
                    self.property, self.text = attrib.get("name"), []
            elif self.root is None:
                raise _NotJUnit(tag)
            return
        self._open(tag, attrib)

    def _open(self, tag: str, attrib) -> None:
        """Any element but a `<property>`: the first must be a JUnit root."""
        if self.root is None:
            if tag not in ("testsuites", "testsuite"):
                raise _NotJUnit(tag)
            self.root = tag
        if tag == "testcase":
            self.case, self.case_props, self.outcome, self.outcome_text = attrib, {}, None, ""
        elif tag == "properties":
            self.props = self.case_props if self.case is not None else (self.suites[-1].props if self.suites else None)
        elif tag in _RESULT_RANK:
            if self._outranks(tag):
                self.outcome, self.text = (tag, attrib), []
        elif tag == "testsuite":
            # Listed in document order, as the suites start; filled in as each one ends.
            self.suites.append(_OpenSuite(attrib.get("name", ""), place=len(self.read.suites)))
            self.read.suites.append(None)

    def _outranks(self, tag: str) -> bool:
        """Whether a failure, error or skipped element of the open testcase outranks its outcome so far."""
        return self.case is not None and (self.outcome is None or _RESULT_RANK[tag] < _RESULT_RANK[self.outcome[0]])

    def data(self, text: str) -> None:
        if self.text is not None:
            self.text.append(text)

    def end(self, tag: str) -> None:
        if tag == "property":
            if self.property is not None:
                self.props[self.property], self.property, self.text = "".join(self.text), None, None
            return
        if tag == "testcase":
            if self.case is not None:
                self.read.cases.append(_record(self.case, self.case_props, self.outcome, self.outcome_text))
                if self.suites:
                    self.suites[-1].cases += 1
            self.case = None
        elif tag == "properties":
            self.props = None
        elif tag in _RESULT_RANK:
            if self.text is not None:
                self.outcome_text, self.text = "".join(self.text), None
        elif tag == "testsuite" and self.suites:
            self._close_suite()

    def close(self) -> None:
        """Called by lxml at the end of a whole document; `finish` covers a truncated one too."""

    def finish(self) -> None:
        """Suites a truncated file left open are kept with what was read of them."""
        while self.suites:
            self._close_suite()

    def _close_suite(self) -> None:
        suite = self.suites.pop()
        self.read.suites[suite.place] = suite_info(self.read.file, suite.name, suite.props, suite.cases)


def _record(case, props: dict[str, str], outcome: tuple[str, dict] | None, details: str) -> CaseRecord:
    get = props.get
    if outcome is None:
        tag, message = None, ""
    else:
        tag = outcome[0]
        message = outcome[1].get("message") or details.strip().partition("\n")[0]
        # A cell the model source has no way to build: a skip to other readers, its own outcome here.
        if tag == "skipped" and (outcome[1].get("type") == NOT_BUILDABLE_TYPE or get(NOT_BUILDABLE_PROPERTY) == "true"):
            tag = NOT_BUILDABLE_TYPE
    return CaseRecord(
        case.get("classname", ""),
        case.get("name", ""),
        case.get("time"),
        tag,
        message,
        details,
        get("stage"),
        get("kind"),
        get("skip_scope"),
        get("exactness"),
        get("probe"),
        get("components"),
        # The rest is in the cell and the typed fields; 30,000 copies of it would cost ~80 MB.
        tuple([item for item in props.items() if item[0] not in TYPED]),
    )
