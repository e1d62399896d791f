"""Synthetic nightly baseline reports: a matrix that drifts night by night, for the dashboard's tests and benchmark.

Reports are built as the diff writes them (`Report` of `CellLine`s, written with `write_report`),
straight from plain values: 30 nights of 30,000 cells take seconds, where going through JUnit
and the real diff would take a minute. The skiplist they refer to is written too, so skipped
cells link to real TOML lines. Passes compare what the runner's rules do (weak checks for
ExecuTorch and for ONNX/OpenVINO generate), and every 50th class is one the source cannot build.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

from bot.cells import cells_for
from bot.diff.model import CellLine, Report, write_report

# Families as bot.models.sources.base names them, split by whether a class generates.
GENERATIVE_FAMILIES, ENCODER_FAMILIES = (
    ("decoder", "encoder-decoder", "multimodal"),
    ("text-encoder", "vision", "audio"),
)
ERRORS = (
    ("export", "torch._dynamo.exc.UserError: Could not guard on data-dependent expression Eq(u0, 1)"),
    ("export", "onnxscript.ir.ConversionError: Unsupported FX nodes: {'call_function': ['aten._assert_async.msg']}"),
    ("run", "RuntimeError: Exception from src/inference/src/cpp/core.cpp:109: Check 'shape' failed"),
    ("compare", "AssertionError: Tensor-likes are not close! Mismatched elements: 812 / 4096 (19.8%)"),
)
SKIP_REASON = "Same `detach_(alias(...))` retrace bug as `CHMv2`, only under dynamic shapes <b>."
NOT_BUILDABLE = 50  # every 50th class (Synth49…, Synth99…) is one the model source cannot build


def compared(cell_id: str) -> str | None:
    """What a pass of this cell compares when less than values, as the runner's rules say (docs/runner.md)."""
    name = cell_id.partition("::")[2]
    if "_executorch_" in name:
        return "count"
    return "names" if "_generate" in name and ("_onnx_" in name or "_openvino_" in name) else None


def not_buildable(model_class: str) -> bool:
    return int(re.search(r"\d+", model_class)[0]) % NOT_BUILDABLE == NOT_BUILDABLE - 1


def matrix(count: int) -> list:
    """`count` cells of synthetic model classes: three generative (24 cells) for each encoder (8 cells)."""
    cells, i = [], 0
    while len(cells) < count:
        generative = i % 4 != 3
        cells += cells_for(f"Synth{i}ForCausalLM" if generative else f"Synth{i}Model", generative=generative)
        i += 1
    return cells[:count]


def family(model_class: str) -> str:
    """`SynthN…`'s family: by N, among the generative or the encoder families."""
    number = int(re.search(r"\d+", model_class)[0])
    return (GENERATIVE_FAMILIES if model_class.endswith("ForCausalLM") else ENCODER_FAMILIES)[number % 3]


def _first(rng: random.Random, cell) -> CellLine:
    roll = rng.random()  # drawn for every cell, so the classes the source cannot build change no other cell
    if not_buildable(cell.model_class):
        return CellLine(cell.id, "not-buildable", message=f"no zoo recipe builds {cell.model_class}")
    if roll < 0.80:
        return CellLine(cell.id, "passed", compared=compared(cell.id), figures=figures(rng))
    if roll < 0.83:
        return CellLine(cell.id, "passed-uncompared", exactness_scope="exactness")
    if roll < 0.89:
        return CellLine(cell.id, "skipped", message=SKIP_REASON, skip_scope=f"{cell.backend}.{cell.shape}")
    if roll < 0.90:  # skiplisted, run anyway by the probe, and passing: an obsolete skip
        return CellLine(cell.id, "passed", probe=True, skip_scope=f"{cell.backend}.{cell.shape}")
    if roll < 0.99:
        stage, message = rng.choice(ERRORS)
        return CellLine(cell.id, "failed", stage=stage, message=message)
    return CellLine(cell.id, "error", kind=rng.choice(("crash", "timeout")), message="worker 'gw1' crashed")


def figures(rng: random.Random, error: float | None = None) -> tuple[tuple[str, float], ...]:
    """A value-compared pass's figures, as a report line carries them (sorted by name)."""
    error = error if error is not None else float(f"{rng.uniform(1e-7, 1e-4):.2g}")
    size = float(rng.randrange(100_000, 5_000_000, 1024))
    return (("artifact_bytes", size), ("max_abs_error", error), ("tolerance_ratio", float(f"{error / 1e-3:.3g}")))


def _drift(rng: random.Random, line: CellLine, broken_backend: str | None) -> CellLine:
    """One night later: most cells as before; a few break or get fixed; one backend may regress."""
    cell_backend = line.cell.rpartition("::")[2].split("_")[1]
    if broken_backend and cell_backend == {"dynamo": "torch"}.get(broken_backend, broken_backend):
        if line.status == "passed" and rng.random() < 0.3:
            return CellLine(line.cell, "failed", stage="export", message=ERRORS[1][1], base_status="passed")
    roll = rng.random()
    if roll < 0.004 and line.status == "passed":
        stage, message = rng.choice(ERRORS)
        return CellLine(line.cell, "failed", stage=stage, message=message, base_status="passed")
    if roll < 0.02 and line.status in ("failed", "error"):
        return CellLine(line.cell, "passed", base_status=line.status, compared=compared(line.cell))
    if roll < 0.03 and line.figures:  # a change that makes this export ten times less exact, still passing
        grown = dict(line.figures)["max_abs_error"] * 10
        return line._replace(figures=figures(rng, grown)[:1] + ((("max_abs_error", grown),)) + figures(rng, grown)[2:])
    return line


def nightly_reports(folder: Path, *, runs: int = 30, cells: int = 30_000, seed: int = 0) -> list[Path]:
    """Write `runs` nights of reports (`folder/night-NN/report.json`) and `folder/skiplists/export_skips.toml`."""
    rng = random.Random(seed)
    grid = matrix(cells)
    classes = sorted({cell.model_class for cell in grid})
    families = {name: family(name) for name in classes}
    lines = [_first(rng, cell) for cell in grid]
    start = datetime(2026, 11, 1, 3, 17, tzinfo=timezone.utc)
    paths = []
    for night in range(runs):
        if night:
            # Nights 12 to 14 regress OpenVINO; night 15 recovers it (the plot shows the dip).
            broken = "openvino" if 12 <= night < 15 else None
            lines = [_drift(rng, line, broken) for line in lines]
            if night == 15:
                lines = [
                    CellLine(x.cell, "passed", compared=compared(x.cell))
                    if "_openvino_" in x.cell and x.message == ERRORS[1][1]
                    else x
                    for x in lines
                ]
        sha = f"{rng.getrandbits(160):040x}"
        failing = [x for x in lines if x.status in ("failed", "error") and not x.probe]
        counts: dict[str, Counter] = {}
        for line, cell in zip(lines, grid):
            counts.setdefault(f"{cell.backend}/{cell.shape}", Counter())[line.status] += 1
        report = Report(
            verdict="failure" if failing else "success",
            headline=f"{len(failing):,} failing cells",
            baseline=False,
            categories={
                "new_failing": tuple(failing),
                "not_buildable": tuple(x for x in lines if x.status == "not-buildable"),
            },
            counts={key: dict(value) for key, value in counts.items()},
            versions={"transformers": "5.23.0", "torch": "2.13.0"},
            head_sha=sha,
            run_url=f"https://github.com/huggingface/transformers/actions/runs/{1000 + night}",
            cells=tuple(sorted(lines, key=lambda x: x.cell)),
            created=(start + timedelta(days=night)).isoformat(timespec="seconds"),
            families=families,
        )
        path = folder / f"night-{night:02d}" / "report.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_report(report, path)
        paths.append(path)
    scopes: dict[str, list[str]] = {}
    for line in lines:
        if line.skip_scope:
            model_class = line.cell.partition("::")[0]
            if model_class not in scopes.setdefault(line.skip_scope, []):
                scopes[line.skip_scope].append(model_class)
    toml = ["# Synthetic skips for the dashboard tests."]
    for scope in sorted(scopes):
        toml += ["", f'["{scope}"]'] + [f'{name} = "{SKIP_REASON}"' for name in scopes[scope]]
    skiplists = folder / "skiplists"
    skiplists.mkdir(exist_ok=True)
    (skiplists / "export_skips.toml").write_text("\n".join(toml) + "\n", encoding="utf-8")
    return paths
