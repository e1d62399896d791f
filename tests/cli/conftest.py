"""Fixtures of the command-line tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    """A git checkout of one commit, for the commands that read a repository (the tests may run
    from a copy of this checkout that is no git repository: scripts/test-light.sh)."""
    root = tmp_path_factory.mktemp("repo")
    (root / "README.md").write_text("a checkout\n", encoding="utf-8")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "one commit")):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True)
    return root
