"""The stage a failure of the checkout's own export test happened in, read from where the test was when it raised.

The checkout's test (tests/exporters/test_export.py) runs each stage through a call of its own:
`_prepare_export_…_model_and_inputs` builds the model (and, on the generate path, captures its
calls from `generate()`), `_collect_eager_outputs` runs eager, `export_program` exports, a
`_run_…` helper (or the exported program's `.module()`) runs the export, and `_check_outputs_close`
or an `assert…` of the test compares. The innermost frame of the checkout's tests folder that one
of these rules recognises names the stage; a test written otherwise gets none, and what is known
(the exception and the frame) is said instead of a stage (docs/outcomes.md).
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

# (rule, stage), first match wins, tried on each frame of the test module from the innermost outwards.
_Rule = Callable[[traceback.FrameSummary], bool]
RULES: tuple[tuple[_Rule, str], ...] = (
    (lambda f: f.name == "_check_outputs_close", "compare"),
    (lambda f: f.name.startswith("_run_"), "run"),
    (lambda f: bool(re.search(r"\bexport_program\(|\btorch\.export\.export\(", f.line or "")), "export"),
    (lambda f: ".module()(" in (f.line or ""), "run"),
    (lambda f: bool(re.match(r"self\.assert\w*\(", (f.line or "").strip())), "compare"),
    (lambda f: f.name == "_collect_eager_outputs", "eager"),
    (lambda f: f.name == "_prepare_export_generate_model_and_inputs", "capture"),
    (lambda f: f.name == "_prepare_export_model_and_inputs", "build"),
)


def failed_stage(tb: TracebackType | None, origin: Path | None) -> str | None:
    """The stage the test was in when it raised; None when no frame of the checkout's tests says it."""
    frames = [f for f in traceback.extract_tb(tb) if origin is None or inside(f.filename, origin)]
    return stage_of(frames)


def stage_of(frames: Sequence[traceback.FrameSummary]) -> str | None:
    for frame in reversed(frames):
        for rule, stage in RULES:
            if rule(frame):
                return stage
    return None


def inside(filename: str, folder: Path) -> bool:
    """Whether `filename` is under `folder` (a file that cannot be resolved is not)."""
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except (OSError, ValueError):
        return False
