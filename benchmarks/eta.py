"""How honest the progress line's time left is: its guess at 10 %, 50 % and 90 % of a run against the real rest.

Run: `.venv/bin/python benchmarks/eta.py [--preset smoke] [-n 2]`.
Target: within ±30 % of the real remaining time from 10 % of the cells on (smoke preset, `-n 2`).
The run is the real `export-bot run` command; its progress lines (one per finished cell, off a
terminal) say the elapsed time and the guess, and the last one when the run ended.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This folder's select.py would shadow the standard library's `select` (used by subprocess).
HERE, ROOT = Path(__file__).resolve().parent, Path(__file__).resolve().parents[1]
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

LINE = re.compile(
    r"^\[\s*(\d+)/(\d+)\] · \d+ failing · (?:(\d+)m)?(\d+)s elapsed · (?:~(?:(\d+)m)?(\d+)s left|estimating)"
)
CHECKPOINTS = (0.10, 0.50, 0.90)


def _seconds(minutes: str | None, seconds: str | None) -> float | None:
    return None if seconds is None else int(minutes or 0) * 60 + int(seconds)


def progress_lines(text: str) -> list[tuple[int, int, float, float | None]]:
    """(done, total, elapsed, guessed seconds left or None) per progress line."""
    found = []
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            done, total, em, es, lm, ls = match.groups()
            found.append((int(done), int(total), _seconds(em, es), _seconds(lm, ls)))
    return found


def errors(lines: list[tuple[int, int, float, float | None]]) -> list[tuple[float, int, float | None, float]]:
    """At each checkpoint: (share, cells done, guessed left, real left); real left runs to the last line."""
    end = lines[-1][2]
    rows = []
    for share in CHECKPOINTS:
        done, total, elapsed, guess = next(x for x in lines if x[0] >= share * x[1])
        rows.append((share, done, guess, end - elapsed))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="smoke")
    parser.add_argument("-n", dest="workers", default="2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "bot", "run", "--preset", args.preset, "-n", args.workers]
        command += ["--junit", str(Path(folder) / "junit.xml")]
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=folder)
    lines = progress_lines(done.stderr)
    if not lines:
        print(done.stderr[-3000:])
        return 1
    print(f"{args.preset}, -n {args.workers}: {lines[-1][1]} cells in {lines[-1][2]:.0f} s")
    print(f"{'at':>5} {'cells':>6} {'said left':>10} {'real left':>10} {'error':>8}")
    worst = 0.0
    for share, cells, guess, real in errors(lines):
        error = (guess - real) / real if guess is not None and real > 0 else None
        worst = max(worst, abs(error)) if error is not None else worst
        said = "estimating" if guess is None else f"{guess:.0f} s"
        shown = "—" if error is None else f"{error:+.0%}"
        print(f"{share:>5.0%} {cells:>6} {said:>10} {real:>8.0f} s {shown:>8}")
    print(f"worst error from 10 % on: {worst:.0%} (target: within 30 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
