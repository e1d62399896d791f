"""The full sweep, measured and sized: run every cell of a stratified sample, project every class of the zoo.

Run:
  .venv/bin/python benchmarks/sweep.py run [--sample 100] [--out benchmarks/sweep-runs] [--coverage zoo-coverage.jsonl]
  .venv/bin/python benchmarks/sweep.py project [--out benchmarks/sweep-runs] [--write benchmarks/sweep_projection.json]

`run` picks a stratified sample of the zoo's buildable classes (every family, in proportion, at
least 2 each, the same sample on every machine: classes are ordered by a hash of their name),
and runs all their cells (four backends, static and dynamic, forward and generate) with the real
`export-bot run --probe` (as the baseline runs them), a few classes per process, each chunk's JUnit kept in --out; rerunning resumes
after the chunks already there (`--fresh` starts over). `project` reads those JUnit files,
prints the per-cell times by backend × path × shape, and projects the full sweep: its cell
count, CPU-hours, and the shard count that keeps each shard's wall time within the budget on
2-core runners; `--write` records it for the baseline workflow.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This folder's select.py would shadow the standard library's `select` (used by subprocess).
HERE, ROOT = Path(__file__).resolve().parent, Path(__file__).resolve().parents[1]
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from collections import defaultdict  # noqa: E402
from statistics import mean, median  # noqa: E402

from bot.cells import Cell, cells_for  # noqa: E402
from bot.models import catalog  # noqa: E402
from bot.run.shard import RECORDED_TIMES, timing_key  # noqa: E402

RUNNER_CORES = 2  # GitHub's standard Linux runner
PARALLEL_EFFICIENCY = 0.85  # `-n 2` on 2 cores: 1.7× serial (benchmarks/runner.py's target)
SETUP_SECONDS = 300  # checkout, install, imports before the first cell (a shard's fixed cost)
WALL_BUDGET = 3600  # seconds per shard
EARLY_FAILURE_SECONDS = 1.0  # a cell whose class fails at build or eager never reaches an exporter


def stratified_sample(names_by_family: dict[str, list[str]], size: int) -> list[str]:
    """`size` classes over the families in proportion (at least 2 each), the same on every machine.

    Ordered round-robin over the families, so a sample cut short still spans them all.
    """
    total = sum(len(v) for v in names_by_family.values())
    shares = []
    for _, names in sorted(names_by_family.items()):
        share = max(2, round(size * len(names) / total))
        shares.append(sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())[:share])
    picked: list[str] = []
    for rank in range(max(len(s) for s in shares)):
        picked.extend(s[rank] for s in shares if rank < len(s))
    return picked


def buildable_by_family(coverage: Path | None) -> dict[str, list[str]]:
    entries = catalog.load().entries
    if coverage and coverage.exists():
        ok = {json.loads(line)["model_class"] for line in coverage.read_text().splitlines() if '"status": "ok"' in line}
    else:
        ok = {n for n, e in entries.items() if e.buildable}
    by_family: dict[str, list[str]] = defaultdict(list)
    for name in sorted(ok):
        by_family[entries[name].family].append(name)
    return dict(by_family)


def run(args: argparse.Namespace) -> None:
    out: Path = args.out
    if args.fresh and out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    recorded = out / "sample.json"  # a rerun resumes the same sample
    if recorded.exists():
        sample = json.loads(recorded.read_text())
    else:
        sample = stratified_sample(buildable_by_family(args.coverage), args.sample)
        recorded.write_text(json.dumps(sample, indent=1) + "\n")
    chunks = [sample[i : i + args.chunk] for i in range(0, len(sample), args.chunk)]
    print(f"sample: {len(sample)} classes in {len(chunks)} chunks → {out}", flush=True)
    for index, chunk in enumerate(chunks):
        junit = out / f"chunk-{index:03d}.xml"
        if junit.exists():
            continue
        command = ["nice", "-n", str(args.nice), str(ROOT / ".venv" / "bin" / "export-bot"), "run"]
        # --probe, as the baseline runs: skiplisted cells export too, so they are costed as they run there.
        command += ["--models", ",".join(chunk), "--probe", "-n", str(args.workers), "--junit", str(junit) + ".part"]
        command += ["--cell-timeout", str(args.cell_timeout)]
        start, cpu = time.perf_counter(), _children_cpu()
        code = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, text=True).returncode
        wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
        part = Path(str(junit) + ".part")
        if part.exists():
            part.rename(junit)
            junit.with_suffix(".json").write_text(json.dumps({"classes": chunk, "wall": wall, "cpu": cpu}) + "\n")
        print(
            f"chunk {index + 1}/{len(chunks)} ({', '.join(chunk)}): exit {code}, {wall:.0f} s, {cpu:.0f} CPU-s",
            flush=True,
        )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def read_cells(out: Path) -> list[tuple[Cell, float, str]]:
    """(cell, seconds, outcome) of every JUnit chunk; seconds are CPU-seconds where the chunk recorded them.

    On a shared machine a cell's wall time counts the time it waited for a core. A chunk's
    CPU time (its processes' user + system) over the sum of its cells' wall times scales each
    cell back to the CPU it used (never up: the CPU time also holds the process start-up).
    """
    found = []
    for junit in sorted(out.glob("chunk-*.xml")):
        cases = list(ET.parse(junit).getroot().iter("testcase"))
        record = junit.with_suffix(".json")
        scale = 1.0
        if record.exists():
            total = sum(float(c.get("time", 0.0)) for c in cases) or 1.0
            scale = min(1.0, json.loads(record.read_text())["cpu"] / total)
        for case in cases:
            try:
                cell = Cell.from_testcase(case.get("classname", ""), case.get("name", ""))
            except ValueError:
                continue
            outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            found.append((cell, float(case.get("time", 0.0)) * scale, outcome))
    return found


def project(args: argparse.Namespace) -> None:
    measured = read_cells(args.out)
    if not measured:
        raise SystemExit(f"{args.out}: no chunk-*.xml JUnit yet; run `benchmarks/sweep.py run` first")
    entries = catalog.load().entries
    times: dict[str, list[float]] = defaultdict(list)
    family_times: dict[tuple[str, str], list[float]] = defaultdict(list)
    for cell, seconds, _ in measured:
        # Run with --probe, a skip here is one the baseline meets too (no static cache, a backend
        # without the inputs): it costs its few milliseconds there, and is counted so.
        times[timing_key(cell)].append(seconds)
        family = entries[cell.model_class].family if cell.model_class in entries else "?"
        family_times[(family, timing_key(cell))].append(seconds)
    classes = sorted({cell.model_class for cell, _, _ in measured})
    print(
        f"sample: {len(classes)} classes, {len(measured)} cells ({sum(t for _, t, _ in measured) / 3600:.2f} CPU-hours)"
    )
    print("\n| backend | path | shape | cells | mean s | median s | max s |\n|---|---|---|---:|---:|---:|---:|")
    for key in sorted(times):
        values = times[key]
        backend, *path, shape = key.split("/")
        row = f"| {backend} | {'/'.join(path)} | {shape} | {len(values)} |"
        print(f"{row} {mean(values):.1f} | {median(values):.1f} | {max(values):.1f} |")
    overall = mean(t for values in times.values() for t in values)
    # The full sweep runs the zoo's `all` preset: every class it does not call not buildable.
    # A class coverage saw fail before export (build or eager) costs its cells only that much.
    ran = buildable_by_family(args.coverage)
    ran_eager = {n for names in ran.values() for n in names}
    full = [cell for name, e in entries.items() if e.buildable for cell in cells_for(name, generative=e.generative)]
    seconds, missing = 0.0, set()
    for cell in full:
        if args.coverage and cell.model_class not in ran_eager:
            seconds += EARLY_FAILURE_SECONDS
            continue
        family = entries[cell.model_class].family
        sample = family_times.get((family, timing_key(cell))) or times.get(timing_key(cell))
        if not sample:
            missing.add(timing_key(cell))
        seconds += mean(sample) if sample else overall
    if missing:
        print(f"\nno measurement for {', '.join(sorted(missing))}: costed at the sample's mean cell")
    capacity = RUNNER_CORES * PARALLEL_EFFICIENCY * (WALL_BUDGET - SETUP_SECONDS)
    shards = max(1, math.ceil(seconds / capacity))
    projection = {
        "transformers": catalog.load().transformers_version,
        "sample_classes": len(classes),
        "sample_cells": len(measured),
        "full_classes": len({cell.model_class for cell in full}),
        "full_classes_running_eager": len(ran_eager) if args.coverage else None,
        "full_cells": len(full),
        "cpu_hours": round(seconds / 3600, 1),
        "shards": shards,
        "shard_wall_minutes": round((seconds / shards / (RUNNER_CORES * PARALLEL_EFFICIENCY) + SETUP_SECONDS) / 60, 1),
        "assumptions": {
            "runner_cores": RUNNER_CORES,
            "parallel_efficiency": PARALLEL_EFFICIENCY,
            "setup_seconds": SETUP_SECONDS,
            "wall_budget_seconds": WALL_BUDGET,
        },
        "cell_seconds": {key: round(mean(values), 2) for key, values in sorted(times.items())},
        "cells": [{"cell": cell.id, "seconds": round(sec, 2), "outcome": outcome} for cell, sec, outcome in measured],
    }
    print(
        f"\nfull sweep: {projection['full_classes']} classes, {len(full)} cells, {projection['cpu_hours']} CPU-hours; "
        f"{shards} shards of ≤ {WALL_BUDGET // 60} min on {RUNNER_CORES}-core runners "
        f"(≈ {projection['shard_wall_minutes']} min each)"
    )
    if args.write:
        args.write.write_text(json.dumps(projection, indent=1) + "\n")
        recorded = ROOT / "bot" / "data" / RECORDED_TIMES
        recorded.write_text(json.dumps(recorded_times(projection), indent=1) + "\n")
        print(f"written: {args.write}, {recorded.relative_to(ROOT)} (the baseline's shard balance)")


def recorded_times(projection: dict) -> dict:
    """What the runner balances shards with when no earlier JUnit knows a cell (bot/run/shard.py)."""
    return {
        "about": "Mean CPU-seconds per cell by backend/path[/cache]/shape, measured by benchmarks/sweep.py on a "
        "stratified sample of the zoo; balances --shard when no earlier JUnit knows a cell.",
        "transformers": projection["transformers"],
        "sample_classes": projection["sample_classes"],
        "sample_cells": projection["sample_cells"],
        "shards": projection["shards"],
        "seconds": projection["cell_seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "project"):
        p = sub.add_parser(name)
        p.add_argument("--out", type=Path, default=HERE / "sweep-runs")
        p.add_argument("--coverage", type=Path, default=None, help="zoo coverage JSONL: sample only classes that ran")
    sub.choices["run"].add_argument("--sample", type=int, default=100)
    sub.choices["run"].add_argument("--chunk", type=int, default=1, help="classes per export-bot run")
    sub.choices["run"].add_argument("--workers", default="1")
    sub.choices["run"].add_argument("--nice", type=int, default=19)
    sub.choices["run"].add_argument("--cell-timeout", type=float, default=600)
    sub.choices["run"].add_argument("--fresh", action="store_true", help="drop earlier chunks and start over")
    sub.choices["project"].add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    run(args) if args.command == "run" else project(args)


if __name__ == "__main__":
    main()
