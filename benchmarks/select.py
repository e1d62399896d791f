"""Selection over the full real Transformers tree for a one-file change: time it (target < 2 s) and print the counts.

Usage: .venv/bin/python benchmarks/select.py [--model-type gpt2] [--repeat 5]
The installed package's whole `models/` folder is committed once into a temporary git
repository under `src/transformers/models/`; a branch then changes one modeling file.
"""

from __future__ import annotations

import os
import sys

# This file shares its name with the stdlib `select` module, which `subprocess` imports:
# keep its own folder off sys.path so the real one is found.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import argparse  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.models.index import installed_models_dir  # noqa: E402
from bot.select import select_cells  # noqa: E402
from bot.select.catalog import load_catalog  # noqa: E402
from bot.settings import Settings  # noqa: E402


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def build_repo(repo: Path, model_type: str) -> None:
    models = repo / "src" / "transformers" / "models"
    shutil.copytree(installed_models_dir(), models, ignore=shutil.ignore_patterns("__pycache__"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "add", "-A")
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    target = models / model_type / f"modeling_{model_type}.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n# a one-line change\n", encoding="utf-8")
    git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-am", "change")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-type", default="gpt2", help="the model type whose modeling file changes")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = Settings()
    catalog = load_catalog(settings)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        start = time.perf_counter()
        build_repo(repo, args.model_type)
        print(f"set-up (copy + commit the full tree, not timed below): {time.perf_counter() - start:.1f} s")
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            selection = select_cells(repo, "main", "pr", settings, catalog)
            times.append(time.perf_counter() - start)
    types = len({c for c in selection.reasons})
    print(f"model types in tree: {len(list(installed_models_dir().glob('*/modeling_*.py')))} modeling modules")
    print(f"change: models/{args.model_type}/modeling_{args.model_type}.py → {selection.summary}")
    print(
        f"selected cells: {len(selection.cells)} of {selection.full_sweep_cells} in the full sweep "
        f"({100 * len(selection.cells) / selection.full_sweep_cells:.2f} %); "
        f"classes {types} of {selection.full_sweep_classes}"
    )
    print(f"modular descendants listed: {len(selection.modular_descendants)}")
    print(
        f"selection time over {args.repeat} runs: best {min(times):.3f} s, median {sorted(times)[len(times) // 2]:.3f} s "
        f"(target < 2 s)"
    )


if __name__ == "__main__":
    main()
