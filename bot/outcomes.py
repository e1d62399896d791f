"""What a cell did (docs/outcomes.md): the outcome vocabulary shared by the runner, the reader and the diff."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from bot.cells import Cell


class Status(str, Enum):
    PASSED = "passed"
    PASSED_UNCOMPARED = "passed-uncompared"  # an exactness scope matched: run, not compared
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    # The model source has no way to build the class (no zoo recipe, no tester lists it):
    # nothing about the export, so neither passing nor failing (docs/outcomes.md).
    NOT_BUILDABLE = "not-buildable"
    # Selected, yet no result in the head's JUnit (a shard that died, a runner that dropped it): made
    # by the reconciliation with the selection (bot/results/reconcile.py), never read from a testcase.
    # Never a pass: the verdict is neutral while any selected cell is missing (docs/outcomes.md).
    MISSING = "missing"

    @property
    def passing(self) -> bool:
        return self in (Status.PASSED, Status.PASSED_UNCOMPARED)

    @property
    def failing(self) -> bool:
        return self in (Status.FAILED, Status.ERROR)


# What a testcase can say: every outcome but `missing`, which is the absence of one. Read from JUnit,
# kept in main's baseline and counted per backend and shape in a report.
RESULT_STATUSES = tuple(status for status in Status if status is not Status.MISSING)

# What a pass compared when it is less than values (the `compared` testcase property), in the
# words the comment, the summary and the site use. `tolerated`: the checkout's test tolerated a
# runtime limit and passed without running the exported program (upstream's ExecuTorch tests).
WEAK_COMPARED = {
    "names": "output names only",
    "count": "the output count only",
    "none": "nothing",
    "tolerated": "nothing: a runtime limit tolerated, the program never ran",
}
# Passes that ran nothing of the export's program: never evidence that a skip is no longer needed.
RAN_NOTHING = frozenset({"none", "tolerated"})

# Where in the seed's sequence a failure happened.
# JUnit for a NOT_BUILDABLE cell: `<skipped type="not-buildable">` (a skip to any other reader)
# and the testcase property `not_buildable=true`.
NOT_BUILDABLE_TYPE = "not-buildable"
NOT_BUILDABLE_PROPERTY = "not_buildable"
# The worker's CPU seconds while the cell ran (every thread): written by bot/run, summed per backend in the report's cost.
CPU_PROPERTY = "cpu_seconds"
# What a cell measured, as testcase properties (docs/rules.md): bot/run/junit.py writes them, main's
# baseline keeps some (bot/results/baseline.py), drift and the dashboard read them (bot/diff/drift.py).
FIGURE = "figure."  # what the value comparisons and the exported artifacts measured
TIMING = "time."  # seconds per stage: time.build, time.eager, time.export, time.measure, time.run, time.compare
MAX_ABS_ERROR = FIGURE + "max_abs_error"
MAX_REL_ERROR = FIGURE + "max_rel_error"
MISMATCH_FRACTION = FIGURE + "mismatch_fraction"
TOLERANCE_RATIO = FIGURE + "tolerance_ratio"
ARTIFACT_BYTES = FIGURE + "artifact_bytes"
DELEGATED_NODES = FIGURE + "delegated_nodes"  # ExecuTorch: ops lowered into a delegate
EXPORT_SECONDS = TIMING + "export"
TEST_SECONDS = TIMING + "test"  # the checkout's own test method, less its tester's setUp()
# Testsuite properties naming the transformers a run tested: the package's folder, and the HEAD
# of the checkout it came from (absent when it is not in a git work tree). With `version.transformers`.
TRANSFORMERS_LOCATION = "transformers.location"
TRANSFORMERS_SHA = "transformers.sha"
TEST_ID = "test_id"  # testcase property: the pytest node id of the checkout's test that judged the cell
STAGES = ("build", "capture", "eager", "export", "run", "compare")
# `<error>` kinds are crash, timeout, harness and build; the first two are infrastructure,
# flagged beside conformance failures.
INFRASTRUCTURE_KINDS = ("crash", "timeout")


@dataclass(frozen=True)
class CellResult:
    """One cell's outcome as read back from JUnit."""

    cell: Cell
    status: Status
    stage: str | None = None  # failures and build errors
    kind: str | None = None  # errors: crash, timeout, harness, build
    message: str = ""  # `ExceptionType: first line`, or the skip reason
    details: str = ""  # the full traceback
    skip_scope: str | None = None  # a skiplist scope, or `env:<why>`
    exactness_scope: str | None = None
    probe: bool = False  # a skiplisted cell run anyway
    duration: float | None = None
    components: tuple[str, ...] = ()
    properties: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    source: str = ""  # file it was read from

    @property
    def compared(self) -> str | None:
        """What a pass compared (`values`, `names`, `count`, `none`), from its testcase property; None if unsaid."""
        return _first(self.properties, "compared")

    @property
    def judge(self) -> str | None:
        """Who judged the cell (`checkout:tests/exporters/test_export.py`, `rules:seed-1`), from its testcase property."""
        return _first(self.properties, "judge")

    @property
    def test_id(self) -> str | None:
        """The checkout's test method that judged the cell, as a pytest node id, from its testcase property."""
        return _first(self.properties, TEST_ID)

    @property
    def infrastructure(self) -> bool:
        return self.status is Status.ERROR and self.kind in INFRASTRUCTURE_KINDS


def _first(properties: tuple[tuple[str, str], ...], name: str) -> str | None:
    """The first value of a testcase property, as the JUnit listed it; None when it is absent."""
    return next((value for key, value in properties if key == name), None)
