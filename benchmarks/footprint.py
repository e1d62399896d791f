"""Footprints: what recording costs a cell, and what the footprints cost main's baseline.json.

    python benchmarks/footprint.py [--models BertModel,LlamaForCausalLM,ViTModel] [--backends dynamo,onnx]
                                   [--source zoo | transformers-tests:PATH] [--repeats 2]

Runs the same cells in two fresh processes, one plain and one recording (the recorder must be in
place before transformers is imported, as `export-bot run --footprints` installs it in each
worker), each as the plugin runs a cell (`execute_cell`, between the recorder's `start` and
`stop`): a first pass, which also pays the imports (compiling the instrumented modules, once per
worker), then `--repeats` passes, each cell's fastest kept (the steady state of a long shard).
Prints per-cell CPU seconds side by side, the ratios recorded / plain of both, the functions and
files per footprint, the JUnit property's size, and the size of baseline.json's footprint tables,
extrapolated to the full sweep (docs/selection.md, "Footprints").
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, this folder comes first on sys.path, and its select.py would shadow the stdlib's.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

FULL_SWEEP_CELLS = 17_784  # the catalogue's full sweep (docs/baseline.md, "The push mix")
FULL_SWEEP_TYPES = 521  # model types exporting in the full sweep (docs/baseline.md)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="BertModel,LlamaForCausalLM,ViTModel")
    parser.add_argument("--backends", default="dynamo,onnx")
    parser.add_argument("--source", default="zoo")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--worker", choices=("plain", "recorded"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    runs = {}
    for mode in ("plain", "recorded"):
        command = [sys.executable, __file__, "--worker", mode, *sys.argv[1:]]
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
        runs[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    report(runs["plain"], runs["recorded"])


def worker(args) -> None:
    """One process: the cells once (imports included), then `repeats` times; prints one JSON line."""
    recorder = None
    if args.worker == "recorded":
        from bot.run.footprint import Recorder, roots_for

        recorder = Recorder(roots_for(args.source))
        recorder.install()
    from bot.models.sources import get_source
    from bot.run.execute import execute_cell
    from bot.run.planning import build_plan
    from bot.skiplist.model import load_skiplists, read_skiplists

    plan = build_plan(
        models=(args.models,),
        backends=(args.backends,),
        source=args.source,
        skiplists=read_skiplists(ROOT / "skiplists"),
    )
    source, skiplists = get_source(plan.source), load_skiplists(plan.skiplists)
    first, best, status, footprints = {}, {}, {}, {}

    def once(cell) -> float:
        if recorder is not None:
            recorder.start()
        cpu = time.process_time()
        run = execute_cell(cell, source, skiplists, probe=True, rules=plan.rules)
        if recorder is not None:
            footprints[cell.id] = sorted(recorder.stop())
        status[cell.id] = run.status.value
        return time.process_time() - cpu  # the recorder's `stop` included: the plugin pays it per cell

    for cell in plan.cells:
        first[cell.id] = once(cell)
    for _ in range(args.repeats):
        for cell in plan.cells:
            best[cell.id] = min(best.get(cell.id, float("inf")), once(cell))
    calls = counted(recorder, plan.cells, once) if recorder is not None else {}
    document = {"first": first, "best": best, "status": status, "footprints": footprints, "calls": calls}
    sys.stdout.write("\n" + json.dumps(document) + "\n")


def counted(recorder, cells, once) -> dict[str, list[float]]:
    """Per cell: the instrumented calls it made and what they and `stop` cost, by count × the measured price.

    A figure the shared machine's noise does not blur, as the side-by-side ratios are.
    """
    import timeit

    from bot.run.footprint import HIT

    modules = [m for m in list(sys.modules.values()) if HIT in getattr(m, "__dict__", {})]
    calls = [0]
    add = recorder.hits.add

    def count(index):
        calls[0] += 1
        add(index)

    price = timeit.timeit("add(5)", globals={"add": set().add}, number=1_000_000) / 1_000_000
    found = {}
    for cell in cells:
        for module in modules:
            module.__dict__[HIT] = count
        calls[0] = 0
        once(cell)
        for module in modules:
            module.__dict__[HIT] = add
        start = time.process_time()
        recorder.stop()  # the hits of the cell just run are still there: the same stop again
        found[cell.id] = [calls[0], calls[0] * price + time.process_time() - start]
    return found


def report(plain: dict, recorded: dict) -> None:
    cells = [
        c
        for c in plain["first"]
        if plain["status"][c] == recorded["status"].get(c) and plain["status"][c].startswith("passed")
    ]
    print(f"{'cell':64} {'first pass (imports)':>26} {'steady':>24}")
    for c in cells:
        a, b, x, y = plain["first"][c], recorded["first"][c], plain["best"][c], recorded["best"][c]
        print(f"{c:64} {a:6.2f} → {b:6.2f} s ×{b / a:5.3f}   {x:6.2f} → {y:6.2f} s ×{y / x:5.3f}")
    for name in ("first", "best"):
        a, b = sum(plain[name][c] for c in cells), sum(recorded[name][c] for c in cells)
        label = "first pass, one-time imports included" if name == "first" else "steady state"
        ratios = [recorded[name][c] / plain[name][c] for c in cells]
        print(
            f"{label}: CPU {a:.1f} s plain, {b:.1f} s recorded: ratio {b / a:.3f} (per-cell median {statistics.median(ratios):.3f})"
        )
    print(f"{len(cells)} of {len(plain['first'])} cells passed alike in both processes")
    calls = recorded.get("calls", {})
    if calls:
        share = sum(calls[c][1] for c in cells if c in calls) / sum(plain["best"][c] for c in cells if c in calls)
        median = statistics.median(calls[c][0] for c in cells if c in calls)
        print(
            f"accounted: median {median:,.0f} instrumented calls per cell; their price is {share * 100:.2f} % "
            "of the cells' CPU"
        )
    sizes(recorded["footprints"])


def sizes(found: dict[str, list[str]]) -> None:
    from bot import footprints

    sets = {cell: frozenset(names) for cell, names in found.items() if names}
    if not sets:
        return
    files = [len({footprints.split(name)[0] for name in s}) for s in sets.values()]
    props = [len(footprints.encode(s)) for s in sets.values()]
    print(
        f"footprints: median {statistics.median(map(len, sets.values())):.0f} functions in {statistics.median(files):.0f} "
        f"files; JUnit property median {statistics.median(props):,.0f} characters"
    )
    document = footprints.tables({cell: (s, 0) for cell, s in sets.items()})
    table = len(json.dumps({k: document[k] for k in ("functions", "groups", "shared_groups")}, separators=(",", ":")))
    per_cell = len(json.dumps(document["footprints"], separators=(",", ":"))) / len(sets)
    types = len({cell.split("::")[0].removesuffix("ForCausalLM").removesuffix("Model") for cell in sets})
    estimate = per_cell * FULL_SWEEP_CELLS + table / types * FULL_SWEEP_TYPES
    print(
        f"baseline.json footprints: tables {table:,} bytes for {types} model types, {per_cell:,.0f} bytes per cell; "
        f"at {FULL_SWEEP_CELLS:,} cells of {FULL_SWEEP_TYPES} types about {estimate / 1e6:.1f} MB "
        "(the tables grown per model type: an upper bound, library code is shared)"
    )


if __name__ == "__main__":
    main()
