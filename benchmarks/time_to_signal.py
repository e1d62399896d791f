"""Time to signal: push → the export-conformance status and comment, projected from measured per-job times.

Usage: .venv/bin/python benchmarks/time_to_signal.py [--model-type llama] [--shards 4] [--workers 2]
Measured here: the selection for a one-line change to models/<type>/modeling_<type>.py over the
full installed tree (the repository benchmarks/select.py builds) and its time; the selected
cells' seconds from bot/data/cell_seconds.json, split across the shards as `--shard` splits them
and run by `--workers` processes per shard; the shard job's download (benchmarks/install.py's
resolution reports) and the rate pip unpacks wheels here; the light install (README, Benchmarks).
Assumed, as options (GitHub's side cannot be measured from here): the wait for a hosted runner per
job, the delay before a `workflow_run` event starts the publishing workflow, checkout and setup
times, download bandwidth, the runner's start-up before its first cell and the artifact steps.
Goals: ≤ 10 minutes for the one-model PR on 4 two-core shards, ≤ 2 minutes for a docs-only PR.
"""

from __future__ import annotations

import os
import sys

# A sibling (benchmarks/select.py) shares its name with the stdlib `select` module: keep this folder off sys.path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.run.shard import assign_shards, estimate  # noqa: E402
from bot.select import select_cells  # noqa: E402
from bot.select.catalog import load_catalog  # noqa: E402
from bot.settings import Settings  # noqa: E402

# Measured (2026-12-02, this 2-core machine, shared): benchmarks/install.py --downloads-only, and
# `pip install --no-deps --target` of torch's 192 MB CPU wheel in 31.5 s.
SHARD_DOWNLOAD_MB = 449
UNPACK_MB_PER_S = 192 / 31.5
LIGHT_INSTALL_S = 14.3  # README, Benchmarks: the light install, cold pip cache


def _build_repo(repo: Path, model_type: str) -> None:
    spec = importlib.util.spec_from_file_location("select_benchmark", Path(_HERE) / "select.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build_repo(repo, model_type)


def measure_selection(model_type: str, shards: int) -> tuple[int, float, list[float]]:
    """Selected cells, the selection's seconds, and each shard's cell-seconds."""
    settings = Settings()
    catalog = load_catalog(settings)
    with tempfile.TemporaryDirectory() as tmp:
        _build_repo(Path(tmp), model_type)
        start = time.perf_counter()
        selection = select_cells(Path(tmp), "main", "pr", settings, catalog)
        took = time.perf_counter() - start
    loads = [sum(estimate(cell) for cell in part) for part in assign_shards(list(selection.cells), shards)]
    return len(selection.cells), took, loads


def projections(args, cells_s: float, select_s: float, cached: bool) -> dict[str, list[tuple[str, float]]]:
    """Each path from push to signal as (step, seconds): pure arithmetic over the figures."""
    download = 0.0 if cached else SHARD_DOWNLOAD_MB / args.bandwidth
    restore = SHARD_DOWNLOAD_MB / args.cache_bandwidth if cached else 0.0
    runner_install = download + restore + SHARD_DOWNLOAD_MB / UNPACK_MB_PER_S
    job_start = [("runner assigned (assumed)", args.queue), ("checkouts + setup-python (assumed)", args.checkout)]
    select_job = [*job_start, ("light install", LIGHT_INSTALL_S), ("select (measured)", select_s)]
    publish = [
        ("workflow_run delivered (assumed)", args.event_delay),
        *job_start,
        ("light install", LIGHT_INSTALL_S),
        ("comment + status", args.step),
    ]
    shard = [*job_start, ("torch + transformers + runner install", runner_install)]
    shard += [("runner start-up (assumed)", args.startup), ("cells, slowest shard", cells_s), ("upload", args.step)]
    report = [*job_start, ("runner install (for the confirming re-run)", runner_install)]
    report += [("baseline + diff + report", 2 * args.step)]
    return {
        "one-model PR → comment": select_job + [("upload selection", args.step)] + shard + report + publish,
        "docs-only PR → status": select_job + [("report + upload", 2 * args.step)] + publish,
        "any PR → pending": [("workflow_run requested delivered (assumed)", args.event_delay), *job_start]
        + [("light install", LIGHT_INSTALL_S), ("status", args.step)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-type", default="llama")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="`export-bot run -n` per shard (two-core runners)")
    parser.add_argument("--queue", type=float, default=20.0, help="seconds until a hosted runner takes a job")
    parser.add_argument("--event-delay", type=float, default=10.0, help="seconds until workflow_run starts a run")
    parser.add_argument("--checkout", type=float, default=15.0, help="seconds of checkouts and setup-python per job")
    parser.add_argument("--bandwidth", type=float, default=60.0, help="MB/s from PyPI and the PyTorch index")
    parser.add_argument("--cache-bandwidth", type=float, default=100.0, help="MB/s restoring the Actions cache")
    parser.add_argument("--startup", type=float, default=15.0, help="seconds before a shard's first cell")
    parser.add_argument("--step", type=float, default=3.0, help="seconds of a small step (artifact, API calls)")
    args = parser.parse_args()
    count, select_s, loads = measure_selection(args.model_type, args.shards)
    cells_s = max(loads) / args.workers
    print(
        f"modeling_{args.model_type}.py: {count} cells, {sum(loads):.0f} cell-seconds; slowest of {args.shards} "
        f"shards {max(loads):.0f} s / {args.workers} workers = {cells_s:.0f} s; selection {select_s:.2f} s"
    )
    goals = {"one-model PR → comment": 600, "docs-only PR → status": 120, "any PR → pending": 120}
    for cached in (False, True):
        print(f"\n{'warm' if cached else 'cold'} pip cache (setup-python `cache: pip`):")
        for label, steps in projections(args, cells_s, select_s, cached).items():
            total = sum(seconds for _, seconds in steps)
            verdict = "meets" if total <= goals[label] else "misses"
            print(f"  {label}: {total / 60:.1f} min ({verdict} the {goals[label] // 60}-minute goal)")
            if not cached:
                print("    " + "; ".join(f"{step} {seconds:.0f} s" for step, seconds in steps))


if __name__ == "__main__":
    main()
