"""Launch one pytest session over a run plan: the arguments (pure) and the subprocess (the edge)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bot.run.plan import PLAN_SUFFIX, RunPlan

logger = logging.getLogger(__name__)

# pytest's exit codes that still mean "every collected cell ran": 0 all passed, 1 some failed,
# 5 nothing collected (an empty shard). Failures are data; the diff judges them.
COMPLETED = (0, 1, 5)
# An empty ini in the session folder: the run must not pick up the caller's pytest settings or
# conftest.py files (inside a Transformers checkout they would reconfigure or collect its tests).
PYTEST_INI = "[pytest]\njunit_family = xunit2\njunit_suite_name = export-bot\njunit_logging = no\n"


@dataclass(frozen=True)
class SessionOptions:
    junit: Path
    workers: int | str = "auto"  # 0: in-process, no isolation; N ≥ 1 or "auto": xdist workers
    progress: bool = True
    log: Path | None = None  # pytest's own output (stack dumps of timed-out cells); None: inherited stdout
    extra_args: tuple[str, ...] = ()


def pytest_args(plan: RunPlan, plan_path: Path, options: SessionOptions) -> list[str]:
    """The pytest command line (after `python -m pytest`) that runs `plan`."""
    folder = plan_path.parent
    args = [
        "-p",
        "bot.run.plugin",
        "-c",
        str(folder / "pytest.ini"),
        "--rootdir",
        str(folder),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "--export-plan",
        str(plan_path),
        "--junitxml",
        str(Path(options.junit).resolve()),
        "--timeout",
        f"{plan.cell_timeout:g}",
        # Quiet, but the terminal reporter stays: pytest-timeout's thread method writes its stack
        # dump through it before killing the worker, and dies silently (no kill) without it.
        "-qq",
        "--no-header",
        "--no-summary",
        "--tb=native",
        "-p",
        "no:warnings",
    ]
    if options.progress:
        args.append("--export-progress")
    if options.workers == 0:
        # In-process: the signal method fails the hung cell and the session goes on.
        args += ["-p", "no:xdist", "--timeout-method", "signal"]
    else:
        # The thread method also stops cells stuck in native code; it kills the worker, which
        # xdist replaces (the plugin reports that cell as a timeout). Restarts are bounded by
        # the cell count so a run full of crashing cells still finishes every cell.
        args += [
            "-n",
            str(options.workers),
            "--dist",
            "worksteal",
            "--max-worker-restart",
            str(max(len(plan.cells), 1)),
            "--timeout-method",
            "thread",
        ]
    return args + list(options.extra_args) + [str(plan_path)]


def threads_per_worker(workers: int | str) -> int:
    """The cores this process may use (its affinity, not the machine's), shared among `workers`, at least 1.

    `workers` is a count, or xdist's `auto` (one worker per core: one thread each).
    """
    if not isinstance(workers, int):
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no affinity call
        cores = os.cpu_count() or 1
    return max(1, cores // max(workers, 1))


def write_session(plan: RunPlan, folder: Path) -> Path:
    """The plan file and the empty ini pytest runs from; returns the plan path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return plan.write(folder / f"run{PLAN_SUFFIX}")


def run_session(plan: RunPlan, options: SessionOptions, *, folder: Path | None = None, in_process: bool = False) -> int:
    """Run `plan` under pytest and return its exit code.

    By default in a subprocess whose stdout/stderr are inherited (the progress line shows live)
    and that never pollutes the caller with torch; `in_process` calls `pytest.main` here instead
    (tests, benchmarks), which needs `workers=0` semantics to matter only for isolation.
    """
    with tempfile.TemporaryDirectory(prefix="export-bot-run-") as tmp:
        plan_path = write_session(plan, Path(folder or tmp))
        args = pytest_args(plan, plan_path, options)
        logger.info("running %d cells: pytest %s", len(plan.cells), " ".join(args))
        if in_process:
            import pytest

            return int(pytest.main(args))
        env = dict(os.environ)
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        if options.workers:
            # Each worker's torch would start one thread per core: with N workers, N times the cores
            # busy-wait on each other. The cores are shared out instead, unless the user chose.
            env.setdefault("OMP_NUM_THREADS", str(threads_per_worker(options.workers)))
        command = [sys.executable, "-m", "pytest", *args]
        if options.log is None:
            return subprocess.run(command, env=env, check=False).returncode
        with open(options.log, "w", encoding="utf-8") as log:
            return subprocess.run(command, env=env, stdout=log, check=False).returncode
