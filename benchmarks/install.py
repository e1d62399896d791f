"""The jobs' installs: what a shard job downloads, how long the light install takes, how fast the bot starts.

Usage: .venv/bin/python benchmarks/install.py [--python python3.11] [--repeat 5] [--downloads-only]
Downloads: pip's resolution reports (`pip install --dry-run --ignore-installed --report`) of
each job kind's install, counted in packages and megabytes (each wheel's size from the local
file or the server's Content-Length): the light install; a shard job as the workflows install
it, torch's CPU wheel (found here on disk: this machine cannot reach the PyTorch CPU index, whose
wheel is the same file) beside the PR's transformers (5.23.0 stands in) and the runner part; and
the same job had torch come from PyPI (`--isolated --index-url https://pypi.org/simple`), which
resolves to the CUDA build and its nvidia-*/cuda-*/triton wheels.
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
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PYPI = "https://pypi.org/simple"
CONSTRAINTS = ROOT / "bot" / "data" / "constraints-runner.txt"
# The PR's transformers is installed from its checkout (-e .); the release stands in for its requirements.
SHARD = ["torch==2.13.0", "transformers==5.23.0", f"{ROOT}[runner]", "-c", str(CONSTRAINTS)]


def resolve(requirements: list[str], *, pypi_only: bool, folder: Path) -> list[dict]:
    """pip's resolution report of installing `requirements` into an empty environment: name, version, url."""
    report = folder / f"report-{len(list(folder.glob('report-*')))}.json"
    isolation = ["--isolated", "--index-url", PYPI] if pypi_only else []
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed", *isolation]
        + ["--report", str(report), *requirements],
        check=True,
        capture_output=True,
    )
    found = json.loads(report.read_text(encoding="utf-8"))["install"]
    return [
        {"name": i["metadata"]["name"], "version": i["metadata"]["version"], "url": i["download_info"]["url"]}
        for i in found
    ]


def size_of(url: str) -> int | None:
    """Bytes a job downloads for `url`: a local file's size, or the server's Content-Length (None: a local build)."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        return path.stat().st_size if path.is_file() else None
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as response:
        return int(response.headers["Content-Length"])


def downloads(label: str, packages: list[dict]) -> None:
    sizes = {p["name"]: size_of(p["url"]) for p in packages}
    wheels = {name: size for name, size in sizes.items() if size is not None}
    total = sum(wheels.values()) / 1e6
    biggest = sorted(wheels.items(), key=lambda kv: -kv[1])[:4]
    heavy = [n for n in sizes if n.startswith(("nvidia-", "cuda-", "triton"))]
    print(f"{label}: {len(packages)} packages, {total:.0f} MB downloaded ({len(heavy)} nvidia-*/cuda-*/triton)")
    print("  largest: " + ", ".join(f"{name} {size / 1e6:.0f} MB" for name, size in biggest))


def measure_downloads() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        light = resolve([str(ROOT)], pypi_only=False, folder=folder)
        cpu = resolve(SHARD, pypi_only=False, folder=folder)
        torch = [p for p in cpu if p["name"] == "torch"]
        if not torch or "+cpu" not in torch[0]["version"]:
            print(
                f"no CPU wheel of torch 2.13.0 on this machine's find-links (found {torch}): the CPU figure is PyPI's"
            )
        downloads("light job (select, comment, command)", light)
        downloads("shard job, torch from the CPU wheel index (as the workflows install it)", cpu)
        try:
            cuda = resolve(SHARD, pypi_only=True, folder=folder)
        except subprocess.CalledProcessError as exc:
            print(f"shard job, torch from PyPI: the package index did not answer the dry run ({exc.stderr[-300:]!r})")
            return
        downloads("shard job, torch from PyPI (the CUDA build; what `pip install torch==2.13.0` does)", cuda)


def timed(argv: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=str(Path(sys.base_prefix) / "bin" / "python3.11"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--downloads-only", action="store_true", help="Only the resolution reports' figures.")
    args = parser.parse_args()
    measure_downloads()
    if args.downloads_only:
        return
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
