"""The installed bot carries the repository's skiplists/ as package data (setup.py copies them at build time)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import bot
from tests.conftest import ROOT, SKIPLISTS


def packaged_skiplists(tmp_path: Path) -> dict[str, bytes]:
    """bot/data/skiplists of the installed package (the light test) or of a wheel built from this checkout."""
    installed = Path(bot.__file__).resolve().parent
    if installed.parent != ROOT:
        return {path.name: path.read_bytes() for path in (installed / "data" / "skiplists").glob("*.toml")}
    pytest.importorskip("setuptools", reason="builds without isolation, with the installed setuptools")
    # A copy of the sources, so the build's own folders (build/, *.egg-info) stay out of the checkout.
    source = tmp_path / "src"
    for name in ("bot", "skiplists"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        (source / name).write_bytes((ROOT / name).read_bytes())
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path, source]
    subprocess.run(list(map(str, command)), check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("export_bot-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = [name for name in archive.namelist() if name.startswith("bot/data/skiplists/")]
        return {name.rsplit("/", 1)[1]: archive.read(name) for name in names}


def test_the_package_carries_the_skiplists_byte_for_byte(tmp_path):
    shipped = {path.name: path.read_bytes() for path in SKIPLISTS.glob("*.toml")}
    assert shipped and packaged_skiplists(tmp_path) == shipped
    if Path(bot.__file__).resolve().parents[1] == ROOT:  # the light test's copy links skiplists/ on purpose
        assert not SKIPLISTS.is_symlink(), "skiplists/ must hold the files: `cp -r skiplists` copies them"
