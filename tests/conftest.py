"""Fixtures shared across the test suite."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIPLISTS = ROOT / "skiplists"
NPM = ROOT / ".ci" / "npm" / "node_modules"


@pytest.fixture
def skiplists_dir() -> Path:
    """The project's shipped skiplists (read-only: copy before editing)."""
    return SKIPLISTS
