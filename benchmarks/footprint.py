"""Footprints: what recording costs a cell, and what the footprints cost main's baseline.json.

    python benchmarks/footprint.py [--models BertModel,LlamaForCausalLM,ViTModel] [--backends dynamo,onnx]
                                   [--source zoo | transformers-tests:PATH] [-n 1] [--out DIR]

Runs the same cells twice in one go, without and with `--footprints` (each a fresh pytest session:
the recorder must be in place before transformers is imported), and prints per-cell CPU seconds
side by side, the ratio recorded / plain over the cells both passed, the functions and files per
footprint, the JUnit property's size, and the size of a baseline.json holding the run's cells with
and without their footprints, extrapolated to the full sweep (docs/selection.md, "Footprints").
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, this folder comes first on sys.path, and its select.py would shadow the stdlib's.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
from dataclasses import replace  # noqa: E402

FULL_SWEEP_CELLS = 17_784  # the catalogue's full sweep (docs/baseline.md, "The push mix")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="BertModel,LlamaForCausalLM,ViTModel")
    parser.add_argument("--backends", default="dynamo,onnx")
    parser.add_argument("--source", default="zoo")
    parser.add_argument("-n", dest="workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="keep both JUnit files here")
    args = parser.parse_args()

    from bot.run import session
    from bot.run.planning import build_plan
    from bot.skiplist.model import read_skiplists

    plan = build_plan(
        models=(args.models,),
        backends=(args.backends,),
        source=args.source,
        skiplists=read_skiplists(ROOT / "skiplists"),
    )
    out = args.out or Path(tempfile.mkdtemp(prefix="footprint-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    junit = {}
    for recorded in (False, True):
        junit[recorded] = out / f"junit-{'recorded' if recorded else 'plain'}.xml"
        options = session.SessionOptions(junit=junit[recorded], workers=args.workers, progress=False, log=out / "log")
        session.run_session(replace(plan, footprints=recorded), options)
    report(junit[False], junit[True], len(plan.cells))


def report(plain_junit: Path, recorded_junit: Path, planned: int) -> None:
    from bot import footprints
    from bot.outcomes import CPU_PROPERTY
    from bot.results import read_results
    from bot.results.baseline import measured
    from bot.results.baseline_json import dumps

    plain, recorded = read_results([plain_junit]).results, read_results([recorded_junit]).results

    def cpu(result) -> float | None:
        value = dict(result.properties).get(CPU_PROPERTY)
        return float(value) if value else None

    rows = []
    for cell in sorted(plain):
        a, b = plain[cell], recorded.get(cell)
        if b is None or not (a.status.passing and b.status.passing) or cpu(a) is None or cpu(b) is None:
            continue
        rows.append((cell.id, cpu(a), cpu(b)))
        print(f"{cell.id:60} plain {cpu(a):7.2f} s  recorded {cpu(b):7.2f} s  ×{cpu(b) / cpu(a):.3f}")
    total_a, total_b = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"\n{len(rows)} of {planned} cells passed in both runs")
    if rows:
        print(f"CPU seconds: plain {total_a:.1f}, recorded {total_b:.1f}: ratio {total_b / total_a:.3f}")
        print(f"per-cell ratio: median {statistics.median(r[2] / r[1] for r in rows):.3f}")
    props = [dict(r.properties).get(footprints.PROPERTY, "") for r in recorded.values()]
    sets = [footprints.decode(p) for p in props if p]
    if sets:
        files = [len({footprints.split(f)[0] for f in s}) for s in sets]
        print(
            f"footprints: {len(sets)} cells, median {statistics.median(map(len, sets)):.0f} functions in "
            f"{statistics.median(files):.0f} files; property median {statistics.median(len(p) for p in props if p):,.0f} characters"
        )
    sha = "0" * 40
    for name, results in (("plain", plain_junit), ("recorded", recorded_junit)):
        state = measured(
            read_results([results]), commit=sha, time="2026-12-05T00:00:00Z", run_id=1, source="sweep", segment=None
        )
        size = len(dumps(state).encode())
        per_cell = size / max(len(state.cells), 1)
        print(
            f"baseline.json, {name}: {size:,} bytes for {len(state.cells)} cells ({per_cell:,.0f} per cell; "
            f"{per_cell * FULL_SWEEP_CELLS / 1e6:.1f} MB at {FULL_SWEEP_CELLS:,} cells, one measurement each)"
        )


if __name__ == "__main__":
    main()
