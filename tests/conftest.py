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


# tests/test_fuzz.py: each test records how many cases it tried; the total is printed at the
# end of the run (in the controller too under pytest-xdist, which forwards user_properties).
_FUZZ: dict[str, int] = {}


def pytest_runtest_logreport(report) -> None:
    for name, value in report.user_properties:
        if name == "fuzz_cases":
            _FUZZ[report.nodeid] = value


def pytest_terminal_summary(terminalreporter) -> None:
    if _FUZZ:
        terminalreporter.write_line(f"fuzz: {sum(_FUZZ.values()):,} cases tried by {len(_FUZZ)} tests")
