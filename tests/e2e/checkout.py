"""A Transformers-layout git repository for the end-to-end test: the toy model on `main`, a regression on `pr`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT, SKIPLISTS

HERE = Path(__file__).resolve().parent / "toy_checkout"
# The protocol pieces of upstream's tests package, shared with the runner's own fixture checkout.
PROTOCOL = ROOT / "tests" / "fixtures" / "transformers_checkout" / "tests"
MODELING = "src/transformers/models/toy/modeling_toy.py"
TOY_TEST = "tests/models/toy/test_modeling_toy.py"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Toy",
    "GIT_AUTHOR_EMAIL": "toy@example.com",
    "GIT_COMMITTER_NAME": "Toy",
    "GIT_COMMITTER_EMAIL": "toy@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str, strip: bool = True) -> str:
    env = {**os.environ, **GIT_ENV}
    out = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, text=True).stdout
    return out.strip() if strip else out


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_toy_repo(repo: Path) -> tuple[str, str]:
    """`main` with the toy model and its tester, `pr` changing only modeling_toy.py; returns both SHAs (on `pr`)."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for name in ("__init__.py", "test_modeling_common.py", "test_export_common.py", "models/__init__.py"):
        write(repo / "tests" / name, (PROTOCOL / name).read_text(encoding="utf-8"))
    write(repo / "tests/models/toy/__init__.py", '"""Toy checkout: toy tests."""\n')
    write(repo / TOY_TEST, (HERE / "test_modeling_toy.py").read_text(encoding="utf-8"))
    write(repo / "src/transformers/models/toy/__init__.py", "")
    write(repo / MODELING, (HERE / "main" / "modeling_toy.py").read_text(encoding="utf-8"))
    write(repo / "pyproject.toml", (HERE / "pyproject.toml").read_text(encoding="utf-8"))
    shutil.copytree(SKIPLISTS, repo / "skiplists")
    write(repo / ".gitignore", "__pycache__/\n")
    base = commit_all(repo, "Add the toy model")
    git(repo, "checkout", "-q", "-b", "pr")
    write(repo / MODELING, (HERE / "pr" / "modeling_toy.py").read_text(encoding="utf-8"))
    head = commit_all(repo, "Toy: memoise the output scale per sequence length")
    return base, head
