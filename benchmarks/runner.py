"""The matrix runner's speed: wall time serial vs `-n 2`, and the harness overhead (wall minus export, runtime, comparison).

Run: `.venv/bin/python benchmarks/runner.py [--preset smoke|core] [--workers 2] [--serial-workers 0]`.
Targets: `-n 2` at least 1.7× faster than serial on 2 cores; harness overhead at most 15 % of wall.
Each run is the real `export-bot run` command in a fresh process, timed from launch to exit, so the
overhead includes the CLI's own start-up, pytest, worker start-up, imports, model builds and eager references.
Overhead of a parallel run is counted against worker time (workers × wall), the capacity it had.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This folder's select.py (if any) would shadow the standard library's `select` (used by subprocess).
HERE, ROOT = Path(__file__).resolve().parent, Path(__file__).resolve().parents[1]
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from bot.run.junit import read_timings  # noqa: E402

INSIDE = ("export", "run", "compare")  # time spent in the exporters, the runtimes and the judging


@dataclass(frozen=True)
class Measurement:
    workers: int
    wall: float
    cells: int
    inside: float  # Σ time.export + time.run + time.compare over cells
    stages: dict[str, float]
    outcomes: dict[str, int]

    @property
    def capacity(self) -> float:
        return self.wall * max(self.workers, 1)

    @property
    def overhead(self) -> float:
        return (self.capacity - self.inside) / self.capacity


def measure(preset: str, workers: int, folder: Path, extra: list[str]) -> Measurement:
    junit = folder / f"n{workers}.xml"
    command = [
        str(ROOT / ".venv" / "bin" / "export-bot"),
        "run",
        "--preset",
        preset,
        "-n",
        str(workers),
        "--junit",
        str(junit),
        *extra,
    ]
    start = time.perf_counter()
    code = subprocess.run(command, cwd=ROOT, check=False).returncode
    wall = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"{' '.join(command)} exited {code}")
    stages: dict[str, float] = {}
    outcomes: dict[str, int] = {}
    cells = 0
    for case in ET.parse(junit).getroot().iter("testcase"):
        cells += 1
        props = [(p.get("name"), p.get("value")) for p in case.iter("property")]
        for stage, seconds in read_timings(props).items():
            stages[stage] = stages.get(stage, 0.0) + seconds
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    inside = sum(stages.get(stage, 0.0) for stage in INSIDE)
    return Measurement(workers, wall, cells, inside, stages, outcomes)


def report(runs: list[Measurement]) -> str:
    lines = [f"{'workers':>7}  {'cells':>5}  {'wall s':>8}  {'inside s':>8}  {'overhead':>8}  stages (s)  outcomes"]
    for m in runs:
        stages = " ".join(f"{k}={v:.1f}" for k, v in sorted(m.stages.items()))
        outcomes = " ".join(f"{k}={v}" for k, v in sorted(m.outcomes.items()))
        lines.append(
            f"{m.workers:>7}  {m.cells:>5}  {m.wall:>8.1f}  {m.inside:>8.1f}  {m.overhead:>7.1%}  {stages}  {outcomes}"
        )
    if len(runs) == 2:
        speedup = runs[0].wall / runs[1].wall
        lines.append(f"speed-up -n {runs[1].workers} vs -n {runs[0].workers}: {speedup:.2f}× (target ≥ 1.7×)")
    lines.append(f"harness overhead: {', '.join(f'-n {m.workers} {m.overhead:.1%}' for m in runs)} (target ≤ 15 %)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="smoke", choices=("smoke", "core", "all"))
    parser.add_argument("--workers", type=int, default=2, help="workers of the parallel run")
    parser.add_argument("--serial-workers", type=int, default=0, help="0: in-process pytest; 1: one isolated worker")
    parser.add_argument("--skip-serial", action="store_true", help="only the parallel run")
    parser.add_argument("extra", nargs="*", help="more `export-bot run` options after --, e.g. -- --backends dynamo")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="export-bot-bench-") as tmp:
        runs = [] if args.skip_serial else [measure(args.preset, args.serial_workers, Path(tmp), args.extra)]
        runs.append(measure(args.preset, args.workers, Path(tmp), args.extra))
    print(f"preset {args.preset}")
    print(report(runs))


if __name__ == "__main__":
    main()
