"""`export-bot diff` at 10× the largest real JUnit: 400,000 testcases (~130 MB), 5 % newly failing.

Run: `.venv/bin/python benchmarks/diff_scale.py [--cases 400000] [--fail 0.05]`. Prints wall time and peak
RSS of one `diff` (head against base, the proposal included: ~2,500 skiplist additions, which the
editor applies in batches with one re-read each, not one re-read per entry). Before the batching, 40,000
cases took 206 s; the figure to watch is that time grows linearly with the cases.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE, ROOT = Path(__file__).resolve().parent, Path(__file__).resolve().parents[1]
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

TESTS = [
    f"test_{backend}_export_{shape}{suffix}"
    for backend, suffix in (("torch", ""), ("onnx", ""), ("openvino", ""), ("executorch", "_xnnpack"))
    for shape in ("static", "dynamic")
]
BACKEND = {"torch": "dynamo", "onnx": "onnx", "openvino": "openvino", "executorch": "executorch"}


def write_junit(path: Path, cases: int, fail: float, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write(f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="export-bot" tests="{cases}">')
        for i in range(cases):
            name = TESTS[i % len(TESTS)]
            shape = "static" if "static" in name else "dynamic"
            props = (
                f'<properties><property name="backend" value="{BACKEND[name.split("_")[1]]}" />'
                f'<property name="shape" value="{shape}" /><property name="path" value="forward" /></properties>'
            )
            body = props
            if rng.random() < fail:
                body += (
                    f'<failure message="RuntimeError: boom at 0x{i:x}">Traceback\n  File "src/transformers/models/x/'
                    f'modeling_x.py", line {i % 900}, in forward\nRuntimeError: boom</failure>'
                )
            out.write(
                f'<testcase classname="Model{i // len(TESTS)}ForCausalLM" name="{name}" time="1.2">{body}</testcase>'
            )
        out.write("</testsuite></testsuites>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400_000)
    parser.add_argument("--fail", type=float, default=0.05)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="diff-scale-") as tmp:
        head, base = Path(tmp) / "head.xml", Path(tmp) / "base.xml"
        write_junit(head, args.cases, args.fail, 1)
        write_junit(base, args.cases, 0.0, 2)
        command = [sys.executable, "-m", "bot", "diff", "--head", str(head), "--base", str(base)]
        command += ["--json", str(Path(tmp) / "report.json")]
        start = time.perf_counter()
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        size = head.stat().st_size / 1e6
    print(f"cases {args.cases}  head {size:.0f} MB  exit {result.returncode}  wall {wall:.1f} s  peak RSS {rss:.0f} MB")
    return 0 if result.returncode in (0, 1) else 1


if __name__ == "__main__":
    raise SystemExit(main())
