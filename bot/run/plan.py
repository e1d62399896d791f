"""The run plan: the cells and settings one pytest session runs, handed to the plugin (and its workers) as a JSON file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.errors import BotError
from bot.files import read_text
from bot.profiles import PROFILES, RULES_PROFILE

# The plugin collects files with this suffix (and only those): the plan is the "test file".
PLAN_SUFFIX = ".cells.json"
PLAN_VERSION = 1


class PlanError(BotError, ValueError):
    """A plan file the plugin cannot use; names the file and what is wrong."""


@dataclass(frozen=True)
class RunPlan:
    cells: tuple[Cell, ...]
    source: str = "zoo"
    skiplists: str = "skiplists"
    probe: bool = False
    shard: str | None = None  # `I/N`, recorded as a testsuite property
    cell_timeout: float = 1000.0
    rules: str = RULES_PROFILE  # the rules profile judging cells the checkout's own tests do not (bot/profiles.py)
    # Seconds per cell id from an earlier run: cells start longest first so workers finish together.
    durations: Mapping[str, float] = field(default_factory=dict)
    # Record each cell's footprint, the checkout's functions it executed (bot/run/footprint.py).
    footprints: bool = False

    def to_json(self) -> dict:
        return {
            "version": PLAN_VERSION,
            "cells": [cell.id for cell in self.cells],
            "source": self.source,
            "skiplists": self.skiplists,
            "probe": self.probe,
            "shard": self.shard,
            "cell_timeout": self.cell_timeout,
            "rules": self.rules,
            "durations": {cell.id: self.durations[cell.id] for cell in self.cells if cell.id in self.durations},
            "footprints": self.footprints,
        }

    @classmethod
    def from_json(cls, data: dict, where: str = "plan") -> RunPlan:
        if data.get("version") != PLAN_VERSION:
            raise PlanError(f"{where}: plan version {data.get('version')!r}, this bot reads version {PLAN_VERSION}")
        try:
            cells = tuple(Cell.parse(cell_id) for cell_id in data["cells"])
            return cls(
                cells=cells,
                source=data["source"],
                skiplists=data["skiplists"],
                probe=bool(data["probe"]),
                shard=data.get("shard"),
                cell_timeout=float(data["cell_timeout"]),
                rules=_rules(data.get("rules", RULES_PROFILE), where),
                durations={k: float(v) for k, v in data.get("durations", {}).items()},
                footprints=bool(data.get("footprints", False)),
            )
        except (KeyError, TypeError, CellIdError) as exc:
            raise PlanError(f"{where}: {type(exc).__name__}: {exc}") from exc

    def write(self, path: Path) -> Path:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        return path


def read_plan(path: Path | str) -> RunPlan:
    path = Path(path)
    try:
        data = json.loads(read_text(path))  # bounded, and a FIFO is refused rather than waited on
    except (OSError, ValueError) as exc:
        raise PlanError(f"{path}: cannot read the run plan: {exc}") from exc
    return RunPlan.from_json(data, str(path))


def _rules(value: object, where: str) -> str:
    if value not in PROFILES:
        raise PlanError(f"{where}: rules profile {value!r} is none of {', '.join(PROFILES)}; write the plan again")
    return str(value)
