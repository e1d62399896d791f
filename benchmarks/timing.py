"""Wall and CPU time of a child command, for the benchmarks that time real runs side by side.

CPU time is the children's user + system time, read from `getrusage` around the run: on a shared
machine a run's wall time counts the time it waited for a core, its CPU time does not.
"""

from __future__ import annotations

import resource
import subprocess
import time
from pathlib import Path


def timed(command: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `command` to the end, output captured; (the finished process, wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
