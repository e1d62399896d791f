"""The reader's output types: a merged result set, with the problems found on the way as values."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from bot.cells import Cell
from bot.outcomes import CellResult
from bot.registry import VERSIONED_PACKAGES

# Testsuite properties that name a component version (docs/outcomes.md).
VERSION_KEYS = VERSIONED_PACKAGES  # bot/registry.py


@dataclass(frozen=True)
class Problem:
    """Something that makes the results incomplete: where it is, what is wrong, what to do."""

    file: str
    line: int | None
    what: str
    todo: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.what}; {self.todo}"

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "what": self.what, "todo": self.todo}

    @classmethod
    def from_json(cls, data: Mapping) -> Problem:
        return cls(data.get("file", ""), data.get("line"), data.get("what", ""), data.get("todo", ""))


@dataclass(frozen=True)
class SuiteInfo:
    """One `<testsuite>`'s identity: where it came from and what it ran with."""

    file: str
    name: str = ""
    shard: str | None = None  # `I/N`
    source: str | None = None  # model source, e.g. `zoo`
    git_sha: str | None = None
    versions: Mapping[str, str] = field(default_factory=dict)
    testcases: int = 0
    transformers_location: str | None = None  # the installed package's folder
    transformers_sha: str | None = None  # HEAD of the checkout it came from, when it is one


@dataclass(frozen=True)
class Provenance:
    """Which transformers the results tested; a field the suites disagree on holds every value joined by ` / `."""

    transformers_version: str | None = None
    transformers_location: str | None = None
    transformers_sha: str | None = None
    disagree: tuple[str, ...] = ()  # the fields whose suites (shards) disagree

    @property
    def known(self) -> bool:
        return bool(self.transformers_version or self.transformers_location or self.transformers_sha)

    def to_json(self) -> dict:
        return {
            "transformers_version": self.transformers_version,
            "transformers_location": self.transformers_location,
            "transformers_sha": self.transformers_sha,
            "shards_disagree": list(self.disagree),
        }

    @classmethod
    def from_json(cls, data: Mapping | None) -> Provenance:
        data = data or {}
        return cls(
            data.get("transformers_version"),
            data.get("transformers_location"),
            data.get("transformers_sha"),
            tuple(data.get("shards_disagree", ())),
        )


@dataclass(frozen=True)
class ResultSet:
    """Every cell read from a set of JUnit files, plus what could not be read."""

    results: Mapping[Cell, CellResult] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    # Testcases that are not cells (a plain pytest suite's other tests), as `classname::name`.
    non_cells: tuple[str, ...] = ()
    suites: tuple[SuiteInfo, ...] = ()
    files: tuple[str, ...] = ()
    # Cells read more than once (each repeat once more): each is a problem too (bot/results/merge.py).
    duplicates: tuple[Cell, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.problems

    def restricted_to(self, cells: Iterable[Cell]) -> ResultSet:
        """Only the results of `cells`: main's full-sweep baseline seen through a PR's selection,
        so the cells the PR never meant to run are not reported as "not run"."""
        wanted = set(cells)
        return replace(self, results={cell: r for cell, r in self.results.items() if cell in wanted})

    @property
    def versions(self) -> dict[str, str]:
        """Component versions; when shards disagree, every distinct value joined by ` / `."""
        seen: dict[str, list[str]] = {}
        for suite in self.suites:
            for key, value in suite.versions.items():
                if value not in seen.setdefault(key, []):
                    seen[key].append(value)
        ordered = [k for k in VERSION_KEYS if k in seen] + sorted(k for k in seen if k not in VERSION_KEYS)
        return {key: " / ".join(seen[key]) for key in ordered}

    @property
    def provenance(self) -> Provenance:
        """The transformers the suites tested; shards that disagree are named, never hidden."""
        fields = {
            "transformers_version": [s.versions.get("transformers") for s in self.suites],
            "transformers_location": [s.transformers_location for s in self.suites],
            "transformers_sha": [s.transformers_sha for s in self.suites],
        }
        values, disagree = {}, []
        for name, seen in fields.items():
            distinct = list(dict.fromkeys(v for v in seen if v))
            values[name] = " / ".join(distinct) if distinct else None
            if len(distinct) > 1:
                disagree.append(name)
        return Provenance(**values, disagree=tuple(disagree))

    @property
    def git_sha(self) -> str | None:
        shas = {s.git_sha for s in self.suites if s.git_sha}
        return shas.pop() if len(shas) == 1 else None

    @property
    def shards(self) -> tuple[str, ...]:
        return tuple(sorted({s.shard for s in self.suites if s.shard}, key=_shard_key))


def _shard_key(shard: str) -> tuple[int, int]:
    index, _, count = shard.partition("/")
    return (int(count) if count.isdigit() else 0, int(index) if index.isdigit() else 0)
