"""Pure conversions the JUnit reader uses: testcase names to cells, strings to results and suites."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, fields
from functools import cache, lru_cache

from bot.cells import Cell, CellIdError
from bot.outcomes import (
    NOT_BUILDABLE_PROPERTY,
    NOT_BUILDABLE_TYPE,
    TRANSFORMERS_LOCATION,
    TRANSFORMERS_SHA,
    CellResult,
    Status,
)
from bot.results.model import VERSION_KEYS, SuiteInfo

# Testcase properties that the cell id or a CellResult field already carries.
TYPED = frozenset(
    (
        "backend",
        "shape",
        "path",
        "cache",
        "target",
        "probe",
        "stage",
        "kind",
        "skip_scope",
        "exactness",
        "components",
        NOT_BUILDABLE_PROPERTY,
    )
)


_CELL_FIELDS = tuple(f.name for f in fields(Cell))


@cache
def cell_of(classname: str, name: str) -> Cell | None:
    # Cached: a base and a head set share nearly all ids, and parsing is most of the per-case cost.
    # `[A-Za-z_][A-Za-z0-9_]*` as the cell grammar has it, tested in C rather than by a regex.
    if not (classname.isidentifier() and classname.isascii()):
        return None  # a dotted pytest classname, or none: a testcase that is not a cell
    variant = _variant(name)
    if variant is None:
        return None
    # The variant was parsed and validated by `Cell.from_testcase`; only the (checked) model
    # class differs, so the cell is filled in rather than re-validated for each of 30,000 ids.
    # Its cached `name` and `id` (cached_property values) are set here too: the diff, the
    # report and every hash ask for the id, and formatting it per cell adds up.
    cell = object.__new__(Cell)
    cell.__dict__.update(variant, model_class=classname, id=f"{classname}::{variant['name']}")
    return cell


@cache
def _variant(name: str) -> dict | None:
    """A testcase name's cell fields and canonical name, for any model class (a few dozen names)."""
    try:
        placeholder = Cell.from_testcase("_", name, lenient=True)
    except CellIdError:
        return None
    return {**{f: getattr(placeholder, f) for f in _CELL_FIELDS}, "name": placeholder.name}


@lru_cache(maxsize=1024)
def components_of(text: str) -> tuple[str, ...]:
    # A handful of distinct lists (`model`, `prefill,decode`, …): one shared tuple each.
    return tuple(c for c in text.split(",") if c)


# Every field of CellResult with its default, for `build_result`.
_DEFAULTS = {
    f.name: f.default if f.default is not MISSING else f.default_factory()
    for f in fields(CellResult)
    if f.default is not MISSING or f.default_factory is not MISSING
}


def build_result(**values) -> CellResult:
    """A CellResult made without the frozen dataclass's field-by-field `__init__`.

    `object.__setattr__` per field made construction a third of the reading time at 30,000
    cells; filling `__dict__` at once is equivalent for a frozen dataclass without
    `__post_init__` (CellResult has none), and the defaults keep fields added later correct.
    """
    result = object.__new__(CellResult)
    result.__dict__.update(_DEFAULTS)
    result.__dict__.update(values)
    return result


# Enum members as plain constants: `Status.X` goes through the enum's descriptor, a visible
# cost when it runs for each of 60,000 cells.
_PASSED, _UNCOMPARED, _ERROR = Status.PASSED, Status.PASSED_UNCOMPARED, Status.ERROR
_STATUS = {
    "failure": Status.FAILED,
    "error": _ERROR,
    "skipped": Status.SKIPPED,
    NOT_BUILDABLE_TYPE: Status.NOT_BUILDABLE,
}


def result_of(cell: Cell, record, file: str) -> CellResult:
    """A testcase record (`bot.results.junit.CaseRecord`) as the cell's result."""
    outcome = record.outcome
    if outcome is None:
        status = _UNCOMPARED if record.exactness else _PASSED
    else:
        status = _STATUS[outcome]
    time = record.time
    try:
        duration = float(time) if time else None
    except ValueError:
        duration = None
    kind = None
    if status is _ERROR:
        kind = record.kind or "harness"  # a plain pytest `<error>`: setup or teardown broke, not the export
    components, probe = record.components, record.probe
    return build_result(
        cell=cell,
        status=status,
        stage=record.stage or None,
        kind=kind,
        message=record.message,
        details=record.details,
        skip_scope=record.skip_scope or None,
        exactness_scope=record.exactness or None,
        probe=probe is not None and probe.lower() == "true",
        duration=duration,
        components=components_of(components) if components else (),
        properties=record.extra,
        source=file,
    )


def suite_info(file: str, name: str, props: Mapping[str, str], cases: int) -> SuiteInfo:
    return SuiteInfo(
        file=file,
        name=name,
        shard=props.get("shard") or None,
        source=props.get("source") or None,
        git_sha=props.get("git_sha") or props.get("git-sha") or props.get("sha") or None,
        versions=_versions(props),
        testcases=cases,
        transformers_location=props.get(TRANSFORMERS_LOCATION) or None,
        transformers_sha=props.get(TRANSFORMERS_SHA) or None,
    )


def _versions(props: Mapping[str, str]) -> dict[str, str]:
    """Package → version from a suite's properties, whichever way its producer spelled them."""
    # The bot's runner writes `version.torch`; other producers `torch` or `torch_version`.
    versions = {k: props[k] for k in VERSION_KEYS if props.get(k)}
    versions.update({k[: -len("_version")]: v for k, v in props.items() if k.endswith("_version") and v})
    versions.update({k[len("version.") :]: v for k, v in props.items() if k.startswith("version.") and v})
    return versions
