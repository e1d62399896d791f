"""The report: the diff's typed output and its versioned `report.json` form, the hand-off between jobs."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from bot.errors import BotError
from bot.report.groups import Group
from bot.results.model import Problem, Provenance

SCHEMA = "export-bot/report@1"
VERDICTS = ("success", "failure", "neutral")
# docs/diff.md's categories, in the order a reader wants them (what this PR broke first).
CATEGORIES = (
    "newly_broken",  # passed on base, fails on head
    "new_failing",  # fails on head, no base result
    "flaky",  # a re-run disagreed with the first run
    "newly_passing",  # failed on base, passes on head
    "obsolete_skip",  # skiplisted, run anyway by a probe, passed
    "new_passing",  # passes on head, no base result
    "still_failing",  # failed on base and on head: not this PR's fault
    "newly_skipped",  # ran on base, skipped on head
    "not_run",  # base has it, head lacks it: never counted as fixed
    "not_buildable",  # the model source has no way to build the class: no verdict, never proposed
)
EXCERPT = 300  # characters of a message kept per cell


class ReportError(BotError, ValueError):
    """A report.json this version cannot read; the message names the file and what to do."""


class CellLine(NamedTuple):
    """One cell as the report carries it: enough to render, judge and propose, without tracebacks.

    A named tuple rather than a dataclass: a report holds one per cell (30,000 in a full
    sweep), and a tuple is built several times faster.
    """

    cell: str  # the cell id
    status: str  # a `Status` value, or `missing` for a cell the head did not run
    stage: str | None = None
    kind: str | None = None
    message: str = ""  # excerpt: `ExceptionType: first line`, or the skip reason
    probe: bool = False
    skip_scope: str | None = None
    exactness_scope: str | None = None
    base_status: str | None = None  # the cell's status on the base, when it has one
    covered_by: str | None = None  # a failing cell's head skiplist scope, when one lists it
    compared: str | None = None  # a pass that compared less than values: `names`, `count` or `none`

    def to_json(self) -> dict:
        # Defaults are left out: 30,000 lines stay compact.
        defaults = self._field_defaults
        return {k: v for k, v in zip(self._fields, self) if k not in defaults or v != defaults[k]}

    @classmethod
    def from_json(cls, data: Mapping) -> CellLine:
        return cls(**{k: v for k, v in data.items() if k in cls._fields})


class NotBuildableGroup(NamedTuple):
    """Cells the model source cannot build for one reason (the reason names no class: `it`)."""

    reason: str
    classes: tuple[str, ...]
    cells: int

    def to_json(self) -> dict:
        return {"reason": self.reason, "classes": list(self.classes), "cells": self.cells}


def group_not_buildable(lines) -> tuple[NotBuildableGroup, ...]:
    """One group per reason; a source's message names the class, so the class becomes `it` to group."""
    groups: dict[str, dict[str, int]] = {}
    for line in lines:
        model_class = line.cell.partition("::")[0]
        reason = line.message.replace(model_class, "it") if model_class else line.message
        per_class = groups.setdefault(reason or "no reason given", {})
        per_class[model_class] = per_class.get(model_class, 0) + 1
    found = [NotBuildableGroup(r, tuple(sorted(c)), sum(c.values())) for r, c in groups.items()]
    return tuple(sorted(found, key=lambda g: (-g.cells, g.reason)))


@dataclass(frozen=True)
class Report:
    """Everything the publishing job and the proposal step need, as plain values."""

    verdict: str
    headline: str  # one line saying why the verdict is what it is
    baseline: bool  # False: judged against the skiplists alone ("no baseline")
    categories: Mapping[str, tuple[CellLine, ...]] = field(default_factory=dict)
    infrastructure: tuple[str, ...] = ()  # crash and timeout cells, flagged beside failures
    needs_rerun: tuple[str, ...] = ()  # newly broken cells no re-run has confirmed yet
    counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # "backend/shape" → status → n
    problems: tuple[Problem, ...] = ()
    versions: Mapping[str, str] = field(default_factory=dict)
    base_sha: str | None = None
    head_sha: str | None = None
    run_url: str | None = None
    cells: tuple[CellLine, ...] = ()  # every head result
    non_cells: int = 0  # head testcases that are not cells
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # base/head/rerun → files read
    proposal: dict | None = None  # written by `export-bot propose`; its content is the proposer's
    selection: str | None = None  # why these cells ran (`export-bot select`'s summary), when known
    provenance: Provenance = field(default_factory=Provenance)  # which transformers the head tested
    # Test modules that did not import (bot/setup_problems.py), each cause once: origin, message, modules, cells.
    setup_problems: tuple[Mapping, ...] = ()
    groups: tuple[Group, ...] = ()  # newly broken and new failing cells by cause (bot/diff/groups.py)
    # When the report was written (ISO 8601, UTC): orders nightly runs on the dashboard (docs/reports.md).
    created: str | None = None
    # model class → family (text-encoder, decoder, …) when the writer knew it; the dashboard filters on it.
    families: Mapping[str, str] = field(default_factory=dict)
    schema: str = SCHEMA

    def category(self, name: str) -> tuple[CellLine, ...]:
        return self.categories.get(name, ())

    @property
    def not_buildable(self) -> tuple[NotBuildableGroup, ...]:
        """The not-buildable cells grouped by reason, most cells first."""
        return group_not_buildable(self.category("not_buildable"))

    @property
    def setup_headline(self) -> str | None:
        """`3 test modules failed to import: tests/generation/test_utils.py raised …`, when any did."""
        if not self.setup_problems:
            return None
        from bot.setup_problems import SetupCause, headline

        causes = tuple(
            SetupCause(p.get("origin", "?"), p.get("message", ""), tuple(p.get("modules", ())), int(p.get("cells", 0)))
            for p in self.setup_problems
        )
        return headline(causes)

    def with_proposal(self, proposal: dict | None) -> Report:
        return replace(self, proposal=proposal)

    def with_selection(self, summary: str | None) -> Report:
        return replace(self, selection=summary)

    def with_created(self, created: str | None) -> Report:
        return replace(self, created=created)

    def to_json(self) -> dict:
        return {
            "schema": self.schema,
            "verdict": self.verdict,
            "headline": self.headline,
            "baseline": self.baseline,
            "base_sha": self.base_sha,
            "head_sha": self.head_sha,
            "run_url": self.run_url,
            "versions": dict(self.versions),
            "provenance": self.provenance.to_json(),
            "problems": [p.to_json() for p in self.problems],
            "counts": {key: dict(value) for key, value in self.counts.items()},
            "categories": {name: [line.to_json() for line in lines] for name, lines in self.categories.items()},
            "infrastructure": list(self.infrastructure),
            "needs_rerun": list(self.needs_rerun),
            "non_cells": self.non_cells,
            "files": {key: list(value) for key, value in self.files.items()},
            "proposal": self.proposal,
            "selection": self.selection,
            "not_buildable": [group.to_json() for group in self.not_buildable],
            "setup_problems": [dict(problem) for problem in self.setup_problems],
            "groups": [group.to_json() for group in self.groups],
            "created": self.created,
            "families": dict(self.families),
            "cells": [line.to_json() for line in self.cells],
        }

    @classmethod
    def from_json(cls, data: Mapping, *, where: str = "report.json") -> Report:
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if schema != SCHEMA:
            raise ReportError(f"{where}: schema {schema!r} is not {SCHEMA!r}; write it with this export-bot version")
        try:
            return cls(
                verdict=data["verdict"],
                headline=data.get("headline", ""),
                baseline=bool(data.get("baseline")),
                categories={n: tuple(CellLine.from_json(x) for x in v) for n, v in data.get("categories", {}).items()},
                infrastructure=tuple(data.get("infrastructure", ())),
                needs_rerun=tuple(data.get("needs_rerun", ())),
                counts={k: dict(v) for k, v in data.get("counts", {}).items()},
                problems=tuple(Problem.from_json(p) for p in data.get("problems", ())),
                versions=dict(data.get("versions", {})),
                base_sha=data.get("base_sha"),
                head_sha=data.get("head_sha"),
                run_url=data.get("run_url"),
                cells=tuple(CellLine.from_json(x) for x in data.get("cells", ())),
                non_cells=int(data.get("non_cells", 0)),
                files={k: tuple(v) for k, v in data.get("files", {}).items()},
                proposal=data.get("proposal"),
                selection=data.get("selection"),
                provenance=Provenance.from_json(data.get("provenance")),
                setup_problems=tuple(dict(p) for p in data.get("setup_problems", ())),
                groups=tuple(Group.from_json(g) for g in data.get("groups", ())),
                created=data.get("created"),
                families=dict(data.get("families") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportError(f"{where}: not a valid report ({exc!r}); regenerate it with `export-bot diff`") from exc


def write_report(report: Report, path: Path | str) -> None:
    Path(path).write_text(json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def load_report(path: Path | str) -> Report:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReportError(
            f"{path}: cannot read the report ({exc}); pass the report.json `export-bot diff` wrote"
        ) from exc
    return Report.from_json(data, where=str(path))
