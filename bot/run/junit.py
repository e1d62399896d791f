"""JUnit properties of docs/outcomes.md as (name, value) pairs: a testcase's from its run alone, the suite's from the installed packages and git."""

from __future__ import annotations

import importlib.metadata
import logging
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from bot import footprints, registry
from bot.cells import Cell
from bot.outcomes import (
    CPU_PROPERTY,
    FIGURE,
    MAX_ABS_ERROR,
    MAX_REL_ERROR,
    MISMATCH_FRACTION,
    TEST_ID,
    TIMING,
    TOLERANCE_RATIO,
    TRANSFORMERS_LOCATION,
    TRANSFORMERS_SHA,
    Status,
)

if TYPE_CHECKING:  # the result type lives with the runner core, which imports torch lazily
    from bot.run.execute import CellRun

logger = logging.getLogger(__name__)

Properties = list[tuple[str, str]]

# Testsuite property `version.<package>`: the stack a run judged.
VERSIONED_PACKAGES = registry.VERSIONED_PACKAGES


def _flag(value: bool) -> str:
    return "true" if value else "false"


def cell_properties(cell: Cell, *, probe: bool = False) -> Properties:
    """What every testcase records, even one whose worker died before the cell reported anything."""
    if cell.test:  # a checkout's test naming no backend (docs/cells.md): the reader keeps it a cell by this
        props = [("test", cell.test), ("path", cell.path)]
    else:
        props = [("backend", cell.backend), ("shape", cell.shape), ("path", cell.path)]
    if cell.cache:
        props.append(("cache", cell.cache))
    if cell.target:
        props.append(("target", cell.target))
    props.append(("probe", _flag(probe)))
    return props


def run_properties(run: CellRun) -> Properties:
    """What a finished cell adds: components (each one's status when the cell did not pass), scopes, stage, timings."""
    props = _component_properties(run)
    if run.compared and run.status is Status.PASSED:
        props.append(("compared", run.compared))
    props.extend(figure_properties(run.figures))
    props.extend((f"{FIGURE}{name}", f"{value:.0f}") for name, value in sorted(run.artifact.items()))
    props.extend(_scope_properties(run))
    props.extend(walk_properties(run))
    props.extend(_failure_properties(run))
    if run.onnx_optimize is not None:
        props.append(("onnx_optimize", _flag(run.onnx_optimize)))
    props.extend(judge_properties(run))
    props.extend(timing_properties(run.timings))
    if run.cpu_seconds is not None:
        props.append((CPU_PROPERTY, f"{run.cpu_seconds:.3f}"))
    if run.footprint:
        props.append((footprints.PROPERTY, footprints.encode(run.footprint)))
    return props


def _component_properties(run: CellRun) -> Properties:
    """The components; each one's status when the cell did not pass, or when a passing cell's runtime skipped some."""
    props: Properties = []
    if run.components:
        props.append(("components", ",".join(component.name for component in run.components)))
        if not run.status.passing:
            props.extend((f"component.{c.name}", c.status) for c in run.components)
    limited = [c for c in run.components if c.status == "skipped"]
    if run.status.passing and limited:
        # Upstream skips a component its runtime cannot serve and passes the test: say which, and why.
        props.extend((f"component.{c.name}", c.status) for c in limited)
        props.append(("runtime_limit", limited[0].message))
    return props


def _scope_properties(run: CellRun) -> Properties:
    """The module whose set-up the cell ran, and the skiplist scopes that applied to it."""
    props: Properties = []
    if run.setup_module:
        props.append(("setup_module", run.setup_module))
        props.append(("setup_origin", run.setup_origin or run.setup_module))
    if run.skip_scope:
        props.append(("skip_scope", run.skip_scope))
    if run.exactness_scope:
        props.append(("exactness", run.exactness_scope))
    return props


def _failure_properties(run: CellRun) -> Properties:
    """The stage a cell failed or errored in, and the kind of error."""
    props: Properties = []
    if run.stage and run.status in (Status.FAILED, Status.ERROR):
        props.append(("stage", run.stage))
    if run.kind and run.status is Status.ERROR:
        props.append(("kind", run.kind))
    return props


def figure_properties(figures) -> Properties:
    """What the value comparisons measured (bot/run/judge.Figures), worst over the components; none when nothing was."""
    if figures is None:
        return []
    return [
        (MAX_ABS_ERROR, f"{figures.max_abs_error:.6g}"),
        (MAX_REL_ERROR, f"{figures.max_rel_error:.6g}"),
        (MISMATCH_FRACTION, f"{figures.mismatch_fraction:.6g}"),
        (TOLERANCE_RATIO, f"{figures.tolerance_ratio:.6g}"),
        (f"{FIGURE}worst_output", figures.worst),
        (f"{FIGURE}atol", f"{figures.atol:g}"),
        (f"{FIGURE}rtol", f"{figures.rtol:g}"),
    ]


# Testcase properties of the walk the checkout's own skip logic took (bot/run/observed_walk.py).
WALK, GATE_WALK, GATE_SCOPE = "walk", "walk_gate", "gate_scope"


def walk_properties(run: CellRun) -> Properties:
    """The observed walk: scopes looked up in order (comma-separated), those that only gate, the gate that listed the class."""
    props: Properties = []
    if run.walk:
        props.append((WALK, ",".join(run.walk)))
    if run.gate_walk:
        props.append((GATE_WALK, ",".join(run.gate_walk)))
    if run.gate_scope:
        props.append((GATE_SCOPE, run.gate_scope))
    return props


def judge_properties(run: CellRun) -> Properties:
    """Who judged the cell (the checkout's test, or the bot's rules profile), its failing subTest, its warnings."""
    props: Properties = [("judge", run.judge)] if run.judge else []
    if run.test_id:
        props.append((TEST_ID, run.test_id))
    if run.failed_component and run.status is Status.FAILED:
        props.append(("failed_component", run.failed_component))
    props.extend((f"warning.{index}", text) for index, text in enumerate(run.warnings, 1))
    return props


def timing_properties(timings: Mapping[str, float]) -> Properties:
    return [(f"{TIMING}{stage}", f"{seconds:.3f}") for stage, seconds in timings.items()]


def read_timings(properties: Iterable[tuple[str, str]]) -> dict[str, float]:
    """`time.<stage>` properties back into seconds per stage (benchmarks and progress read them)."""
    timings: dict[str, float] = {}
    for name, value in properties:
        if name.startswith(TIMING):
            try:
                timings[name[len(TIMING) :]] = float(value)
            except ValueError:
                logger.warning("property %s=%r is not a number of seconds", name, value)
    return timings


def suite_properties(
    *,
    source: str,
    shard: str | None,
    versions: Mapping[str, str],
    git_sha: str | None,
    transformers_location: str | None = None,
    transformers_sha: str | None = None,
) -> Properties:
    props = [(f"version.{name}", version) for name, version in versions.items()]
    if transformers_location:
        props.append((TRANSFORMERS_LOCATION, transformers_location))
    if transformers_sha:  # absent when the package is not in a git work tree that tracks it
        props.append((TRANSFORMERS_SHA, transformers_sha))
    props.append(("source", source))
    if shard:
        props.append(("shard", shard))
    if git_sha:
        props.append(("git_sha", git_sha))
    return props


def installed_versions(packages: Iterable[str] = VERSIONED_PACKAGES) -> dict[str, str]:
    """Distribution versions, read from metadata so the controller never imports the libraries themselves."""
    versions = {}
    for name in packages:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def source_checkout(source: str) -> Path:
    """The tree whose commit the run judged: the checkout of `transformers-tests:PATH`, else the working directory."""
    prefix = "transformers-tests:"
    return Path(source[len(prefix) :]) if source.startswith(prefix) else Path.cwd()


def read_git_sha(directory: Path) -> str | None:
    """HEAD of the git repository holding `directory`, or None outside one (or without git)."""
    try:
        result = subprocess.run(
            ["git", "-C", str(directory), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = result.stdout.strip()
    return sha if result.returncode == 0 and sha else None
