"""The publishing jobs' install: how long the light install takes and how fast `export-bot github comment` starts.

Usage: .venv/bin/python benchmarks/install.py [--python python3.11] [--repeat 5]
Installs this checkout into fresh virtual environments exactly as the comment and command jobs
do, `pip install <checkout>` (pip builds the wheel from the source folder each time): once with a
cold pip cache (an empty --cache-dir) and once warm (the same cache again); and, beside it, from a
prebuilt wheel (a release installed from the package index). Then times
`export-bot github comment --help` and `export-bot --version` in the warm environment, and
checks that torch is not importable there. Figures are printed; nothing is asserted.
"""

from __future__ import annotations

import os
import sys

# benchmarks/select.py shares its name with the stdlib `select` module, which `subprocess`
# imports: keep this folder off sys.path so the real one is found.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(Path(sys.base_prefix) / "bin" / "python3.11"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build = timed(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp / "dist"), str(ROOT)]
        )
        (wheel,) = (tmp / "dist").glob("*.whl")
        cache = tmp / "pip-cache"
        figures = {}
        # A copy of the checkout, as the jobs' `.export-bot` folder: pip builds in it, not in ROOT.
        source = tmp / "export-bot"
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", ".ci", "*.egg-info", "build"))
        for label, what in (("cold cache", source), ("warm cache", source), ("wheel, warm cache", wheel)):
            venv = tmp / label.replace(" ", "-").replace(",", "")
            shutil.rmtree(venv, ignore_errors=True)
            made = timed([args.python, "-m", "venv", str(venv)])
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--cache-dir", str(cache)]
            figures[label] = (made, timed([*pip, str(what)]))
        bot = str(tmp / "warm-cache" / "bin" / "export-bot")
        starts = {
            "export-bot github comment --help": [
                timed([bot, "github", "comment", "--help"]) for _ in range(args.repeat)
            ],
            "export-bot --version": [timed([bot, "--version"]) for _ in range(args.repeat)],
        }
        probe = "import importlib.util as u; print(u.find_spec('torch') is None)"
        no_torch = subprocess.run(
            [str(tmp / "warm-cache" / "bin" / "python"), "-c", probe], capture_output=True, text=True
        ).stdout.strip()
        packages = subprocess.run(
            [str(tmp / "warm-cache" / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
            capture_output=True,
            text=True,
        ).stdout.split()
    print(f"wheel build (pip wheel --no-deps): {build:.1f} s")
    for label, (made, installed) in figures.items():
        how = "from the wheel" if "wheel" in label else "pip install <source folder>, as the jobs do"
        print(f"light install, {label} ({how}): {installed:.1f} s (+ {made:.1f} s to create the venv)")
    for label, runs in starts.items():
        print(
            f"{label}: median {statistics.median(runs) * 1000:.0f} ms, best {min(runs) * 1000:.0f} ms ({len(runs)} runs)"
        )
    print(f"torch absent from the light install: {no_torch == 'True'}; {len(packages)} packages: {' '.join(packages)}")


if __name__ == "__main__":
    main()
