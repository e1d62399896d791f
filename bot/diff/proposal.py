"""The proposal slot of report.json, typed: skiplist edits and uncoverable cells, checked field by field when read.

The same concept as bot/propose/proposal.py, seen from the report: that module computes a proposal,
this one is its type and its checked JSON.

bot/propose computes a `Proposal`; the report carries it (bot/diff/model.py), so the type lives
beside the report's schema. report.json is written by code a pull request controls, so
`Proposal.from_json` accepts only known actions, the bot's own skiplist file names and bounded
sizes, and names the first wrong field in one line (docs/proposals.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.diff.errors import ReportError
from bot.skiplist.model import FILES  # the only files an entry may edit

ADD, REMOVE, NARROW = "add", "remove", "narrow"
ACTIONS = (ADD, REMOVE, NARROW)
# Bounds far above what a full sweep proposes, so a forged report cannot make publish loop for hours.
MAX_ENTRIES = 10_000
MAX_CELLS = 10_000  # cell ids in one entry's evidence (or one uncoverable cell's would-skip list)
MAX_TEXT = 2_000  # characters of a scope, class name, cell id or reason
MAX_PATCH = 20_000_000  # characters of the unified diff
_SCOPE = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")
_CLASS = re.compile(r"[A-Za-z_]\w*")
# What each JSON type is called in an error message.
_JSON_NAMES = {bool: "true or false", int: "a number", float: "a number", list: "a list", dict: "an object"}
_JSON_NAMES[type(None)] = "null (or missing)"


@dataclass(frozen=True)
class ProposedEdit:
    """`action` on `model_class` under `scope` of skiplist `file`; `evidence` holds cell ids."""

    action: str
    file: str
    scope: str
    model_class: str
    reason: str | None = None  # the drafted reason of an added entry
    new_scopes: tuple[str, ...] = ()  # where a narrowed entry goes
    evidence: tuple[str, ...] = ()  # failing cells for add; cells that now pass for remove/narrow
    still_failing: tuple[str, ...] = ()  # narrow: cells the narrowed entry keeps skipping

    def to_json(self) -> dict:
        data = {"action": self.action, "file": self.file, "scope": self.scope, "model_class": self.model_class}
        if self.reason is not None:
            data["reason"] = self.reason
        if self.new_scopes:
            data["new_scopes"] = list(self.new_scopes)
        data["evidence"] = list(self.evidence)
        if self.still_failing:
            data["still_failing"] = list(self.still_failing)
        return data


@dataclass(frozen=True)
class Uncoverable:
    """A failing cell no scope of the walk can skip without also skipping a passing cell."""

    cell: str
    finest_scope: str  # the narrowest scope that holds it
    would_skip: tuple[str, ...]  # passing (or already skipped) cells that scope would also take

    def to_json(self) -> dict:
        return {"cell": self.cell, "finest_scope": self.finest_scope, "would_skip": list(self.would_skip)}


MAX_WALK = 1_000  # characters of the phrase naming the walk


@dataclass(frozen=True)
class Proposal:
    """What the bot suggests changing in the skiplists, and the evidence for each change."""

    entries: tuple[ProposedEdit, ...] = ()
    patch: str = ""  # unified diff, `a/skiplists/…` → `b/skiplists/…`
    # Changed file name → its new text. Not in report.json (the patch says it all): a proposal
    # read back from a report has none, and whoever applies it edits the files from its entries.
    files: Mapping[str, str] = field(default_factory=dict)
    uncoverable: tuple[Uncoverable, ...] = ()
    min_passes: int = 1  # consecutive passing probes a removal needed
    runs: int = 1  # probe runs consulted
    walk: str = ""  # which scope walk the entries follow, in one phrase (docs/skiplists.md, "Whose walk")

    @property
    def empty(self) -> bool:
        return not self.entries

    def to_json(self) -> dict:
        """The `proposal` slot of report.json."""
        return {
            "entries": [edit.to_json() for edit in self.entries],
            "patch": self.patch,
            "uncoverable": [u.to_json() for u in self.uncoverable],
            "min_passes": self.min_passes,
            "runs": self.runs,
            **({"walk": self.walk} if self.walk else {}),
        }

    @classmethod
    def from_json(cls, data: object, *, where: str = "report.json") -> Proposal:
        """Read the `proposal` slot; anything but the shape `to_json` writes is a ReportError naming the field."""
        c = _Checker(where)
        item = c.object(data, "proposal")
        entries = c.bounded_list(item.get("entries", []), "proposal.entries", MAX_ENTRIES)
        uncoverable = c.bounded_list(item.get("uncoverable", []), "proposal.uncoverable", MAX_CELLS)
        return cls(
            entries=tuple(c.edit(e, f"proposal.entries[{i}]") for i, e in enumerate(entries)),
            patch=c.text(item.get("patch", ""), "proposal.patch", MAX_PATCH),
            uncoverable=tuple(c.uncoverable(u, f"proposal.uncoverable[{i}]") for i, u in enumerate(uncoverable)),
            min_passes=c.positive(item.get("min_passes", 1), "proposal.min_passes"),
            runs=c.positive(item.get("runs", 1), "proposal.runs"),
            walk=c.text(item.get("walk", ""), "proposal.walk", MAX_WALK),
        )


class _Checker:
    """One field at a time; the first wrong one raises the report's error with its path."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, expected: str, value: object, found: str | None = None):
        if found is None and isinstance(value, str):
            found = repr(value) if len(value) <= 40 else f"a string of {len(value):,} characters"
        elif found is None:
            found = _JSON_NAMES.get(type(value), type(value).__name__)
        raise ReportError(
            f"{self.where}: field `{path}` must be {expected}, not {found}; "
            "regenerate the proposal with `export-bot propose --write-report`"
        )

    def object(self, value, path: str) -> Mapping:
        if not isinstance(value, Mapping):
            self.fail(path, "an object", value)
        return value

    def bounded_list(self, value, path: str, limit: int) -> list:
        if not isinstance(value, list):
            self.fail(path, "a list", value)
        if len(value) > limit:
            self.fail(path, f"a list of at most {limit:,} items", value, f"{len(value):,} items")
        return value

    def text(self, value, path: str, limit: int = MAX_TEXT, pattern: re.Pattern | None = None) -> str:
        if not isinstance(value, str) or len(value) > limit:
            self.fail(path, f"a string of at most {limit:,} characters", value)
        if pattern is not None and not pattern.fullmatch(value):
            self.fail(path, "a skiplist scope" if pattern is _SCOPE else "a model class name", value)
        return value

    def strings(self, value, path: str, pattern: re.Pattern | None = None) -> tuple[str, ...]:
        items = self.bounded_list(value, path, MAX_CELLS)
        return tuple(self.text(item, f"{path}[{i}]", pattern=pattern) for i, item in enumerate(items))

    def one_of(self, value, path: str, allowed: tuple[str, ...]) -> str:
        if value not in allowed or not isinstance(value, str):
            self.fail(path, f"one of {', '.join(allowed)}", value)
        return value

    def positive(self, value, path: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1_000_000:
            self.fail(path, "a whole number from 1 to 1,000,000", value)
        return value

    def edit(self, value, path: str) -> ProposedEdit:
        item = self.object(value, path)
        action = self.one_of(item.get("action"), f"{path}.action", ACTIONS)
        reason = item.get("reason")
        if reason is not None or action == ADD:
            # An added entry without a reason would be refused by the editor anyway; say so here.
            if not isinstance(reason, str) or not reason.strip():
                self.fail(f"{path}.reason", "a non-empty string" + (" for `add`" if action == ADD else ""), reason)
            self.text(reason, f"{path}.reason")
        new_scopes = self.strings(item.get("new_scopes", []), f"{path}.new_scopes", _SCOPE)
        if action == NARROW and not new_scopes:
            self.fail(f"{path}.new_scopes", "a non-empty list for `narrow`", new_scopes, "an empty list")
        return ProposedEdit(
            action=action,
            file=self.one_of(item.get("file"), f"{path}.file", FILES),
            scope=self.text(item.get("scope"), f"{path}.scope", pattern=_SCOPE),
            model_class=self.text(item.get("model_class"), f"{path}.model_class", pattern=_CLASS),
            reason=reason,
            new_scopes=new_scopes,
            evidence=self.strings(item.get("evidence", []), f"{path}.evidence"),
            still_failing=self.strings(item.get("still_failing", []), f"{path}.still_failing"),
        )

    def uncoverable(self, value, path: str) -> Uncoverable:
        item = self.object(value, path)
        return Uncoverable(
            cell=self.text(item.get("cell"), f"{path}.cell"),
            finest_scope=self.text(item.get("finest_scope", ""), f"{path}.finest_scope"),
            would_skip=self.strings(item.get("would_skip", []), f"{path}.would_skip"),
        )
