"""benchmarks/eta.py reads the progress lines the run writes and measures the guess against the real rest."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bot.cells import Cell
from bot.outcomes import Status
from bot.run.progress import Progress

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "eta.py"


def _eta():
    spec = importlib.util.spec_from_file_location("eta", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_guess_is_read_from_the_runs_own_progress_lines():
    cells = [Cell.parse(f"M{i}::test_onnx_export_static") for i in range(10)]
    progress = Progress(tuple(cells), {}, started=0.0)
    text = []
    for i, cell in enumerate(cells):  # one worker, 10 s before the first cell, 3 s per cell
        progress.start(cell, now=10.0 + 3 * i)
        progress.record(cell, Status.PASSED, now=13.0 + 3 * i)
        text.append(progress.line(now=13.0 + 3 * i, last=(cell, Status.PASSED)))
    eta = _eta()
    lines = eta.progress_lines("noise\n" + "\n".join(text))
    assert lines[0] == (1, 10, 13.0, 27.0) and lines[-1] == (10, 10, 40.0, 0.0)
    # Every cell takes what the first took: the guess is the real rest at each checkpoint.
    assert [(share, guess, real) for share, _, guess, real in eta.errors(lines)] == [
        (0.1, 27.0, 27.0), (0.5, 15.0, 15.0), (0.9, 3.0, 3.0)
    ]  # fmt: skip
