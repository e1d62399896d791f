"""The report: the diff's typed output and its versioned `report.json` form, the hand-off between jobs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from bot import registry
from bot.cells import SHAPES, Cell, CellIdError, placed
from bot.diff.drift import FIGURES as DRIFT_FIGURES
from bot.diff.drift import LINE_FIGURES, MAX_DRIFT, DriftLine
from bot.diff.errors import ReportError
from bot.diff.groups import Group
from bot.diff.proposal import Proposal
from bot.files import NotAFile, NotText, read_text, write_text
from bot.outcomes import RESULT_STATUSES
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
    "broken_trunk",  # failed at the merge base, on main's newest result and on head: main is broken
    "still_failing",  # failed on base and on head: not this PR's fault
    "newly_skipped",  # ran on base, skipped on head
    "missing",  # selected, and no result in the head: never a pass, the verdict is neutral (docs/outcomes.md)
    "not_run",  # base has it, head lacks it: never counted as fixed
    "not_buildable",  # the model source has no way to build the class: no verdict, never proposed
)
EXCERPT = 300  # characters of a message kept per cell
# Bounds a reader holds a report to: the writer stays far below them, a hostile file does not.
MAX_TEXT = 100_000  # characters of one string
MAX_BYTES = 512 * 2**20  # a full sweep's report is a few MB
MAX_AGE_COUNT = 10_000_000  # cells or commits counted by `baseline_age`
FOREIGN_NAMES = 10  # the head's testcases that are not cells, named in a report (the rest counted)
FOREIGN_NAME = 200  # characters of each name written and shown
MAX_SHARDS = 1000  # shards named to re-run
_SHARD = re.compile(r"[1-9][0-9]{0,5}/[1-9][0-9]{0,5}")
# `counts` keys: the matrix's backend/shape pairs; its statuses: the outcomes' (bot/outcomes.py).
# The counts' keys: the matrix's, then `other/…` for cells on a backend the bot does not know (or on
# none, `other/other`), so the reader keeps a fixed set of keys whatever a checkout's tests are called.
COUNT_KEYS = registry.DerivedTuple(
    lambda declared: (
        tuple(f"{backend.name}/{shape}" for backend in declared for shape in SHAPES)
        + tuple(f"other/{shape}" for shape in (*SHAPES, "other"))
    )
)


def count_key(cell: Cell) -> tuple[str, str]:
    """Where a cell is counted: its backend and shape, or `other` for what the bot cannot place."""
    if placed(cell):
        return cell.backend, cell.shape
    return "other", cell.shape or "other"


COUNT_STATUSES = tuple(status.value for status in RESULT_STATUSES)
_SHA = re.compile(r"[0-9a-fA-F]{1,64}")
_WORD = re.compile(r"[A-Za-z0-9_-]{1,40}")  # a backend's name, as a cell id spells it
# `rules:seed-1`, `checkout:tests/exporters/test_export.py`: what bot/run writes as each cell's `judge`.
JUDGE = re.compile(r"rules:[a-z0-9][a-z0-9.-]{0,39}|checkout:[A-Za-z0-9_][A-Za-z0-9_./-]{0,199}")
_MAX_JUDGES = 8


def judges_of(judges) -> tuple[str, ...]:
    """Who judged the head's cells, each once, from their `judge` properties (bot/run writes them).

    A value of another shape (a pull request's run writes the JUnit) is left out, so report.json stays readable.
    """
    return tuple(sorted({j for j in judges if j and JUDGE.fullmatch(j)}))[:_MAX_JUDGES]


_REPOSITORY = re.compile(r"https://[A-Za-z0-9.-]+(?::\d+)?/[A-Za-z0-9_-][A-Za-z0-9_.-]*/[A-Za-z0-9_-][A-Za-z0-9_.-]*")


class CellLine(NamedTuple):
    """One cell as the report carries it: enough to render, judge and propose, without tracebacks.

    A named tuple rather than a dataclass: a report holds one per cell (30,000 in a full
    sweep), and a tuple is built several times faster.
    """

    cell: str  # the cell id
    status: str  # a `Status` value; `missing` for a cell the head did not run (not run, missing)
    stage: str | None = None
    kind: str | None = None
    message: str = ""  # excerpt: `ExceptionType: first line`, or the skip reason
    probe: bool = False
    skip_scope: str | None = None
    exactness_scope: str | None = None
    base_status: str | None = None  # the cell's status on the base, when it has one
    covered_by: str | None = None  # a failing cell's head skiplist scope, when one lists it
    compared: str | None = None  # a pass that compared less than values: `names`, `count` or `none`
    setup_module: str | None = None  # a build error because this test module did not import (a setup problem)
    flips: int = 0  # flaky: how often the cell flipped on main within the baseline's flaky window
    # What the cell measured (bot/diff/drift.py LINE_FIGURES), name → value: the dashboard's history per cell.
    figures: tuple[tuple[str, float], ...] = ()

    def to_json(self) -> dict:
        # Defaults are left out: 30,000 lines stay compact.
        defaults = self._field_defaults
        data = {k: v for k, v in zip(self._fields, self) if k not in defaults or v != defaults[k]}
        if self.figures:
            data["figures"] = dict(self.figures)
        return data

    @classmethod
    def from_json(cls, data: Mapping) -> CellLine:
        fields = {k: v for k, v in data.items() if k in cls._fields}
        if isinstance(fields.get("figures"), Mapping):
            fields["figures"] = tuple(sorted(fields["figures"].items()))
        return cls(**fields)


@dataclass(frozen=True)
class BaselineAge:
    """How old main's baseline a PR was judged against is: the comment's one line (docs/diff.md)."""

    newest: str | None  # the newest main commit among the base results used
    behind: int | None  # commits from it to the merge base (None: the merge base is not in the baseline's history)
    old_cells: int  # base results older than `stale_days`
    stale_days: float
    merge_base: str | None  # the merge base the PR was judged at (None: not given)
    merge_base_known: bool  # False: the baseline's history lacks it, each cell's newest result on main was used
    flaky_window: int  # the results on main a flip counts within

    def to_json(self) -> dict:
        return {
            "newest": self.newest,
            "behind": self.behind,
            "old_cells": self.old_cells,
            "stale_days": self.stale_days,
            "merge_base": self.merge_base,
            "merge_base_known": self.merge_base_known,
            "flaky_window": self.flaky_window,
        }


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
    # The commit the cells ran on when it is not the head: GitHub's test merge of head into base_sha.
    tested_sha: str | None = None
    run_url: str | None = None
    cells: tuple[CellLine, ...] = ()  # every head result
    non_cells: int = 0  # head testcases that are not cells (foreign): never a pass, left out of the verdict
    foreign: tuple[str, ...] = ()  # the first FOREIGN_NAMES of them, `classname::name`, as a fork wrote them
    no_cells: bool = False  # the head held no cell while cells were expected: neutral, not "no cells ran"
    selected: int | None = None  # how many cells the selection asked for; None: no selection (a sweep)
    missing_shards: tuple[str, ...] = ()  # `I/N` to re-run for the missing cells; none: the whole run
    duplicates: tuple[str, ...] = ()  # cells the head holds more than once (each a problem too)
    files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # base/head/rerun → files read
    proposal: Proposal | None = None  # bot/diff/proposal.py: made by bot/propose, checked when read
    selection: str | None = None  # why these cells ran (`export-bot select`'s summary), when known
    # What the selection says beside it: the PR's settings edits that apply after the merge, the skiplist edits that count now.
    selection_notes: tuple[str, ...] = ()
    provenance: Provenance = field(default_factory=Provenance)  # which transformers the head tested
    # Test modules that did not import (bot/setup_problems.py), each cause once: origin, message, modules, cells.
    setup_problems: tuple[Mapping, ...] = ()
    groups: tuple[Group, ...] = ()  # newly broken and new failing cells by cause (bot/diff/groups.py)
    # When the report was written (ISO 8601, UTC): orders nightly runs on the dashboard (docs/reports.md).
    created: str | None = None
    # model class → family (text-encoder, decoder, …) when the writer knew it; the dashboard filters on it.
    families: Mapping[str, str] = field(default_factory=dict)
    # The repository under test's web address (https://github.com/OWNER/REPO): links in the comment point only into it.
    repository_url: str | None = None
    # How old main's baseline is, when the base was main's per-commit baseline (docs/diff.md).
    baseline_age: BaselineAge | None = None
    # Who judged the head's cells: the checkout's own test module (`checkout:PATH`) and/or the bot's rules profile.
    judged_by: tuple[str, ...] = ()
    # What the head's cells cost: their durations summed (seconds of cell time, workers counted apart).
    cell_seconds: float | None = None
    backend_seconds: Mapping[str, float] = field(default_factory=dict)  # the same, per backend
    # Passing cells whose figures moved beyond the drift thresholds against their base (bot/diff/drift.py).
    drift: tuple[DriftLine, ...] = ()
    drift_fails: bool = False  # the verdict counts drift (`drift-fails`)
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

    def with_proposal(self, proposal: Proposal | None) -> Report:
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
            "tested_sha": self.tested_sha,
            "run_url": self.run_url,
            "versions": dict(self.versions),
            "provenance": self.provenance.to_json(),
            "problems": [p.to_json() for p in self.problems],
            "counts": {key: dict(value) for key, value in self.counts.items()},
            "categories": {name: [line.to_json() for line in lines] for name, lines in self.categories.items()},
            "infrastructure": list(self.infrastructure),
            "needs_rerun": list(self.needs_rerun),
            "non_cells": self.non_cells,
            "foreign": list(self.foreign),
            "no_cells": self.no_cells,
            "selected": self.selected,
            "missing_shards": list(self.missing_shards),
            "duplicates": list(self.duplicates),
            "files": {key: list(value) for key, value in self.files.items()},
            "proposal": self.proposal.to_json() if self.proposal is not None else None,
            "selection": self.selection,
            "selection_notes": list(self.selection_notes),
            "not_buildable": [group.to_json() for group in self.not_buildable],
            "setup_problems": [dict(problem) for problem in self.setup_problems],
            "groups": [group.to_json() for group in self.groups],
            "created": self.created,
            "families": dict(self.families),
            "repository_url": self.repository_url,
            "baseline_age": self.baseline_age.to_json() if self.baseline_age is not None else None,
            "judged_by": list(self.judged_by),
            "cell_seconds": self.cell_seconds,
            "backend_seconds": dict(self.backend_seconds),
            "drift": [line.to_json() for line in self.drift],
            "drift_fails": self.drift_fails,
            "cells": [line.to_json() for line in self.cells],
        }

    @classmethod
    def from_json(cls, data: Mapping, *, where: str = "report.json") -> Report:
        """Read a report.json document, checking each field against `SCHEMA`; fields this version
        does not know are ignored, so a newer writer's additions do not break an older reader."""
        schema = data.get("schema") if isinstance(data, Mapping) else None
        if schema != SCHEMA:
            raise ReportError(f"{where}: schema {schema!r} is not {SCHEMA!r}; write it with this export-bot version")
        f = _Fields(data, where)
        verdict = f.get("verdict", str, None)
        if verdict not in VERDICTS:
            f.fail("verdict", f"one of {', '.join(VERDICTS)}", verdict)
        categories = f.get("categories", dict, {})
        return cls(
            verdict=verdict,
            headline=f.get("headline", str, ""),
            baseline=f.get("baseline", bool, False),
            # A category this version does not know is a newer writer's: left out, like an unknown field.
            categories={
                name: f.lines(lines, f"categories.{name}") for name, lines in categories.items() if name in CATEGORIES
            },
            infrastructure=f.strings("infrastructure"),
            needs_rerun=f.cell_ids("needs_rerun"),
            counts=f.counts(f.get("counts", dict, {})),
            problems=tuple(f.problem(p, f"problems[{i}]") for i, p in enumerate(f.get("problems", list, []))),
            versions={k: f.check(v, str, f"versions.{k}") for k, v in f.get("versions", dict, {}).items()},
            base_sha=f.matching("base_sha", _SHA, "a commit SHA (hexadecimal)"),
            head_sha=f.matching("head_sha", _SHA, "a commit SHA (hexadecimal)"),
            tested_sha=f.matching("tested_sha", _SHA, "a commit SHA (hexadecimal)"),
            run_url=f.get("run_url", (str, type(None)), None),
            cells=f.lines(data.get("cells", []), "cells"),
            non_cells=f.count(data.get("non_cells", 0), "non_cells"),
            foreign=f.bounded("foreign", FOREIGN_NAMES, MAX_TEXT),
            no_cells=f.get("no_cells", bool, False),
            selected=f.optional_count("selected"),
            missing_shards=f.shards("missing_shards"),
            duplicates=f.cell_ids("duplicates"),
            files={k: f.strings(f"files.{k}", v) for k, v in f.get("files", dict, {}).items()},
            proposal=_proposal(data.get("proposal"), where),
            selection=f.get("selection", (str, type(None)), None),
            selection_notes=f.strings("selection_notes"),
            provenance=Provenance.from_json(f.shaped(data.get("provenance"), _PROVENANCE, "provenance", optional=True)),
            setup_problems=tuple(
                f.shaped(p, _SETUP_PROBLEM, f"setup_problems[{i}]")
                for i, p in enumerate(f.get("setup_problems", list, []))
            ),
            groups=tuple(f.group(g, f"groups[{i}]") for i, g in enumerate(f.get("groups", list, []))),
            created=f.get("created", (str, type(None)), None),
            families={k: f.check(v, str, f"families.{k}") for k, v in f.get("families", dict, {}).items()},
            repository_url=f.matching("repository_url", _REPOSITORY, "https://HOST/OWNER/REPO"),
            baseline_age=f.baseline_age(data.get("baseline_age")),
            judged_by=f.judges("judged_by"),
            cell_seconds=f.seconds("cell_seconds"),
            backend_seconds=f.seconds_by("backend_seconds"),
            drift=f.drift(data.get("drift", [])),
            drift_fails=f.get("drift_fails", bool, False),
        )


def _proposal(data, where: str) -> Proposal | None:
    """The `proposal` slot, checked field by field (a pull request's run writes it)."""
    return None if data is None else Proposal.from_json(data, where=where)


# What each JSON type is called in an error message.
_JSON_KINDS = {str: "a string", bool: "true or false", int: "a whole number", float: "a number", list: "a list"}
_JSON_KINDS.update({dict: "an object", type(None): "null", tuple: "an object of figures"})
# CellLine's fields after `cell` and `status`, with the JSON types each may hold.
_KINDS = {"message": (str,), "probe": (bool,), "flips": (int,), "figures": (tuple,)}
_LINE_TYPES = tuple(_KINDS.get(name, (str, type(None))) for name in CellLine._fields[2:])
MAX_FLIPS = 10_000  # a cell's flip count: at most two per result kept (bot/settings.py bounds the window)


# The shapes of the report's nested objects: key → JSON types ((list, T) for a list of T).
_OPTIONAL_STR = (str, type(None))
_PROVENANCE = {
    "transformers_version": _OPTIONAL_STR,
    "transformers_location": _OPTIONAL_STR,
    "transformers_sha": _OPTIONAL_STR,
    "shards_disagree": (list, str),
}
_SETUP_PROBLEM = {"origin": (str,), "message": (str,), "modules": (list, str), "cells": (int,)}
_GROUP = {
    "stage": (str,),
    "signature": (str,),
    "cells": (list, str),
    "excerpt": (str,),
    "repro": (str,),
    "test_repro": (str,),
}
_CULPRIT = {"path": (str,), "line": (int,), "source": (str,), "changed": (bool,), "url": _OPTIONAL_STR}
_HINT = {"id": (str,), "text": (str,), "link": (str,)}


class _Fields:
    """Checks a report document field by field; a wrong one is a ReportError naming its path."""

    def __init__(self, data: Mapping, where: str) -> None:
        self.data, self.where = data, where

    def fail(self, path: str, expected: str, value: object, *, said: str | None = None):
        found = said or _JSON_KINDS.get(type(value), type(value).__name__)
        if said:
            pass
        elif value is None:
            found = "null (or missing)"
        elif isinstance(value, str) and len(value) <= 40:
            found = f"{value!r}"
        raise ReportError(
            f"{self.where}: field `{path}` must be {expected}, not {found}; regenerate it with `export-bot diff`"
        )

    def check(self, value, types, path: str):
        types = types if isinstance(types, tuple) else (types,)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            self.fail(path, " or ".join(_JSON_KINDS[t] for t in types), value)
        if isinstance(value, str) and len(value) > MAX_TEXT:
            self.fail(path, f"at most {MAX_TEXT:,} characters", value, said=f"{len(value):,}")
        return value

    def matching(self, key: str, pattern: re.Pattern, expected: str) -> str | None:
        """An optional string field that must match `pattern` whole."""
        value = self.get(key, (str, type(None)), None)
        if value is not None and not pattern.fullmatch(value):
            self.fail(key, f"null or {expected}", value)
        return value

    def get(self, key: str, types, default):
        if key not in self.data and default is not None:
            return default
        return self.check(self.data.get(key), types, key)

    def strings(self, path: str, value=None) -> tuple[str, ...]:
        items = self.check(self.data.get(path, []) if value is None else value, list, path)
        return tuple(self.check(item, str, f"{path}[{i}]") for i, item in enumerate(items))

    def bounded(self, path: str, items: int, chars: int) -> tuple[str, ...]:
        """A short list of short strings (a fork's test names): past either bound, the report is refused."""
        values = self.strings(path)
        if len(values) > items:
            self.fail(path, f"at most {items} names", values, said=f"{len(values)} of them")
        for i, value in enumerate(values):
            if len(value) > chars:
                self.fail(f"{path}[{i}]", f"at most {chars} characters", value, said=f"{len(value):,}")
        return values

    def shards(self, path: str) -> tuple[str, ...]:
        """Shards named `I/N`, a bounded few."""
        values = self.bounded(path, MAX_SHARDS, 13)
        for i, value in enumerate(values):
            if not _SHARD.fullmatch(value):
                self.fail(f"{path}[{i}]", "a shard `I/N`", value)
        return values

    def optional_count(self, path: str) -> int | None:
        value = self.data.get(path)
        return None if value is None else self.count(value, path)

    def judges(self, path: str) -> tuple[str, ...]:
        """`rules:PROFILE` or `checkout:PATH` values, a handful at most: a forged one is refused, never rendered."""
        values = self.strings(path)
        if len(values) > _MAX_JUDGES:
            self.fail(path, f"at most {_MAX_JUDGES} judges", values, said=f"{len(values)} of them")
        for i, value in enumerate(values):
            if not JUDGE.fullmatch(value):
                self.fail(f"{path}[{i}]", "`rules:PROFILE` or `checkout:PATH`", value)
        return values

    def cell_ids(self, path: str) -> tuple[str, ...]:
        return self.cell_ids_of(self.strings(path), path)

    def cell_ids_of(self, ids: tuple[str, ...] | list, path: str) -> tuple[str, ...]:
        for i, cell_id in enumerate(ids):
            if not isinstance(cell_id, str) or len(cell_id) > 500:
                self.fail(f"{path}[{i}]", "a cell id", cell_id)
            try:
                Cell.parse(cell_id, lenient=True)
            except CellIdError as exc:
                raise ReportError(
                    f"{self.where}: field `{path}[{i}]`: {exc}; regenerate it with `export-bot diff`"
                ) from None
        return tuple(ids)

    def seconds(self, path: str) -> float | None:
        value = self.data.get(path)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 10**9:
            self.fail(path, "a number of seconds, zero or more", value)
        return float(value)

    def seconds_by(self, path: str) -> dict[str, float]:
        """A small object of name → seconds (a backend's cell time): names are short words."""
        found = self.get(path, dict, {})
        if len(found) > 64:
            self.fail(path, "at most 64 names", f"{len(found)} names")
        for name, value in found.items():
            if not _WORD.fullmatch(name):
                self.fail(f"{path}.{name[:40]}", "a name of letters, digits, `_` or `-`", name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 10**9:
                self.fail(f"{path}.{name}", "a number of seconds, zero or more", value)
        return {name: float(value) for name, value in found.items()}

    def drift(self, value) -> tuple[DriftLine, ...]:
        """Drift lines: bounded, each a known figure of a cell id with two finite numbers, zero or more."""
        if not isinstance(value, list) or len(value) > MAX_DRIFT:
            self.fail("drift", f"a list of at most {MAX_DRIFT} drift lines", value)
        lines = []
        for i, item in enumerate(value):
            path = f"drift[{i}]"
            if not isinstance(item, Mapping) or set(item) != {"cell", "figure", "base", "head"}:
                self.fail(path, "an object with cell, figure, base and head", item)
            if item["figure"] not in DRIFT_FIGURES:
                self.fail(f"{path}.figure", f"one of {', '.join(DRIFT_FIGURES)}", item["figure"])
            numbers = [item[k] for k in ("base", "head")]
            if any(isinstance(x, bool) or not isinstance(x, (int, float)) or not 0 <= x < 1e30 for x in numbers):
                self.fail(path, "base and head numbers, zero or more", numbers)
            (cell,) = self.cell_ids_of([item["cell"]], f"{path}.cell")
            lines.append(DriftLine(cell, item["figure"], float(item["base"]), float(item["head"])))
        return tuple(lines)

    def count(self, value, path: str) -> int:
        if self.check(value, int, path) < 0:
            self.fail(path, "zero or more", value)
        return value

    def counts(self, value: Mapping) -> dict[str, dict[str, int]]:
        """`backend/shape` → status → n, with the matrix's keys only: the comment's table is drawn from them."""
        found = {}
        for key, by_status in value.items():
            if key not in COUNT_KEYS:
                self.fail(
                    f"counts.{cut_key(key)}", f"a key of the form backend/shape ({', '.join(COUNT_KEYS[:2])}, …)", key
                )
            for status, n in self.check(by_status, dict, f"counts.{key}").items():
                if status not in COUNT_STATUSES:
                    self.fail(
                        f"counts.{key}.{cut_key(status)}", f"keyed by a status ({', '.join(COUNT_STATUSES)})", status
                    )
                self.count(n, f"counts.{key}.{status}")
            found[key] = dict(by_status)
        return found

    def baseline_age(self, value) -> BaselineAge | None:
        """The `baseline_age` object, each field within its bounds; null when the base was no per-commit baseline."""
        if value is None:
            return None
        item = self.check(value, dict, "baseline_age")
        shas = {}
        for key in ("newest", "merge_base"):
            sha = self.check(item.get(key), (str, type(None)), f"baseline_age.{key}")
            if sha is not None and not _SHA.fullmatch(sha):
                self.fail(f"baseline_age.{key}", "null or a commit SHA (hexadecimal)", sha)
            shas[key] = sha
        behind = self.check(item.get("behind"), (int, type(None)), "baseline_age.behind")
        numbers = {
            "old_cells": (0, MAX_AGE_COUNT, int),
            "stale_days": (0, 366, (int, float)),
            "flaky_window": (1, 1000, int),
        }
        for key, (low, high, types) in numbers.items():
            number = self.check(item.get(key), types, f"baseline_age.{key}")
            if not low <= number <= high:  # NaN is refused too
                self.fail(f"baseline_age.{key}", f"from {low} to {high:,}", number, said=str(number)[:40])
        if behind is not None and not 0 <= behind <= MAX_AGE_COUNT:
            self.fail("baseline_age.behind", f"null or from 0 to {MAX_AGE_COUNT:,}", behind, said=str(behind)[:40])
        return BaselineAge(
            newest=shas["newest"],
            behind=behind,
            old_cells=item["old_cells"],
            stale_days=float(item["stale_days"]),
            merge_base=shas["merge_base"],
            merge_base_known=self.check(item.get("merge_base_known"), bool, "baseline_age.merge_base_known"),
            flaky_window=item["flaky_window"],
        )

    def group(self, value, path: str) -> Group:
        item = self.shaped(value, _GROUP, path)
        culprit = self.shaped(item.get("culprit"), _CULPRIT, f"{path}.culprit", optional=True)
        hint = self.shaped(item.get("hint"), _HINT, f"{path}.hint", optional=True)
        for where, found, key in ((path, item, "signature"), (f"{path}.culprit", culprit, "path"),
                                  (f"{path}.culprit", culprit, "line"), (f"{path}.hint", hint, "id")):  # fmt: skip
            if found is not None and key not in found:  # `{}` is an object missing its keys, not an absent one
                self.fail(f"{where}.{key}", "present", None)
        cells = item.get("cells")
        if not cells:  # a group names its representative cell first: an empty one names nothing
            self.fail(
                f"{path}.cells", "a list of at least one cell id", cells, said="an empty list" if cells == [] else None
            )
        return Group.from_json(item)

    def shaped(self, value, shape: Mapping[str, tuple], path: str, *, optional: bool = False):
        """An object whose known keys hold their JSON types (a list type is (list, item type)); None if optional."""
        if value is None and optional:
            return None
        item = self.check(value, dict, path)
        for key, types in shape.items():
            if key not in item:
                continue
            if types[0] is list:
                for i, element in enumerate(self.check(item[key], list, f"{path}.{key}")):
                    self.check(element, types[1], f"{path}.{key}[{i}]")
            else:
                self.check(item[key], types, f"{path}.{key}")
        return item

    def problem(self, value, path: str) -> Problem:
        item = self.check(value, dict, path)
        for key in ("file", "what", "todo"):
            self.check(item.get(key, ""), str, f"{path}.{key}")
        self.check(item.get("line"), (int, type(None)), f"{path}.line")
        return Problem.from_json(item)

    def lines(self, value, path: str) -> tuple[CellLine, ...]:
        return tuple(self.line(item, f"{path}[{i}]") for i, item in enumerate(self.check(value, list, path)))

    def line(self, item, path: str) -> CellLine:
        """One cell line: an object naming its cell and status, its other fields of their JSON types."""
        if not isinstance(item, dict):
            self.fail(path, "an object", item)
        if not (isinstance(item.get("cell"), str) and isinstance(item.get("status"), str)):
            key = "cell" if not isinstance(item.get("cell"), str) else "status"
            self.fail(f"{path}.{key}", "a string", item.get(key))
        line = CellLine.from_json(item)
        # One pass over the tuple per line: a full sweep's report holds 30,000 of them.
        for name, value, types in zip(CellLine._fields[2:], line[2:], _LINE_TYPES):
            if not isinstance(value, types):
                self.fail(f"{path}.{name}", " or ".join(_JSON_KINDS[t] for t in types), value)
        self.line_bounds(line, item, path)
        return line

    def line_bounds(self, line: CellLine, item: dict, path: str) -> None:
        """A line's figures, flips and strings inside what a report may hold."""
        if line.figures and not _figures_ok(line.figures):
            self.fail(f"{path}.figures", f"numbers, zero or more, named {', '.join(LINE_FIGURES)}", item)
        if line.flips and (isinstance(line.flips, bool) or not 0 <= line.flips <= MAX_FLIPS):
            self.fail(f"{path}.flips", f"a whole number from 0 to {MAX_FLIPS:,}", line.flips)
        if len(line.cell) > MAX_TEXT or len(line.message) > MAX_TEXT:
            self.fail(path, f"a cell with strings of at most {MAX_TEXT:,} characters", line, said="longer")


def _figures_ok(figures: tuple) -> bool:
    return len(figures) <= len(LINE_FIGURES) and all(
        name in LINE_FIGURES and not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value < 1e30
        for name, value in figures
    )


def write_report(report: Report, path: Path | str) -> None:
    write_text(path, json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n")


def load_report(path: Path | str) -> Report:
    try:
        # bot.files refuses a FIFO or a device before opening it, and reads at most MAX_BYTES.
        data = json.loads(read_text(path, limit=MAX_BYTES))
    except NotAFile as exc:
        raise ReportError(
            f"{str(exc).removesuffix('; pass a file')}; pass the report.json `export-bot diff` wrote"
        ) from None
    except (OSError, NotText, ValueError, RecursionError) as exc:
        # ValueError: not JSON; RecursionError: JSON nested deeper than the parser follows.
        reason = (exc.strerror or exc) if isinstance(exc, OSError) else str(exc).removeprefix(f"{path}:")
        raise ReportError(
            f"{path}: cannot read the report ({reason}); pass the report.json `export-bot diff` wrote"
        ) from None
    return Report.from_json(data, where=str(path))


def cut_key(key: str) -> str:
    """A key from a report, short enough for a one-line error."""
    return key if len(key) <= 40 else key[:39] + "…"
