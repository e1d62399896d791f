"""Setup problems of a run (docs/runner.md, model sources): test modules that did not import, each cause said once.

Shared by the runner (its summary and exit), the diff and the report, like bot/outcomes.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot.outcomes import Status

# Testcase properties a cell carries when its test module did not import.
MODULE, ORIGIN = "setup_module", "setup_origin"


@dataclass(frozen=True)
class SetupCause:
    """One cause: the file that raised and its error, the test modules it kept from importing, the cells it cost."""

    origin: str
    message: str
    modules: tuple[str, ...]
    cells: int

    def describe(self) -> str:
        modules = "test module" if len(self.modules) == 1 else "test modules"
        return f"{self.origin} raised {self.message} ({len(self.modules)} {modules}, {self.cells} cells)"


def setup_causes(cells: Iterable[tuple[Mapping[str, str], str]]) -> tuple[SetupCause, ...]:
    """From each cell's (properties, message): the causes, grouped by the file that raised and its error."""
    groups: dict[tuple[str, str], tuple[dict[str, None], list[int]]] = {}
    for properties, message in cells:
        module = properties.get(MODULE)
        if not module:
            continue
        origin = properties.get(ORIGIN) or module
        error = message.rsplit(" (", 1)[0]  # the source adds where it was raised after the error itself
        modules, count = groups.setdefault((origin, error), ({}, [0]))
        modules[module] = None
        count[0] += 1
    return tuple(SetupCause(o, m, tuple(mods), n[0]) for (o, m), (mods, n) in groups.items())


def failed_modules(causes: Iterable[SetupCause]) -> int:
    return len({module for cause in causes for module in cause.modules})


def headline(causes: tuple[SetupCause, ...]) -> str:
    """`3 test modules failed to import: tests/generation/test_utils.py raised ImportError: …`."""
    count = failed_modules(causes)
    noun = "test module" if count == 1 else "test modules"
    return f"{count} {noun} failed to import: " + "; ".join(cause.describe() for cause in causes)


def nothing_built(statuses: Iterable[tuple[Status, str | None]]) -> bool:
    """Every cell that was attempted (not skipped) is a build error or not buildable: the run could build nothing."""
    attempted = [(status, kind) for status, kind in statuses if status is not Status.SKIPPED]
    return bool(attempted) and all(
        status is Status.NOT_BUILDABLE or (status is Status.ERROR and kind == "build") for status, kind in attempted
    )
