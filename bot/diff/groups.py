"""Failures grouped by cause: (stage, normalized error signature), each with its culprit line, repro and hint.

The same groups as bot/report/groups.py, seen from the diff stage: this module forms them, that one
describes their cells in the comment.

Pure functions over the reader's results. The diff step groups because it still holds the
tracebacks (`CellResult.details`); report.json keeps only message excerpts per cell, so the
groups travel in the report whole (docs/reports.md).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bot.cells import Cell
from bot.diff.hints import Hint, hint_for
from bot.outcomes import CellResult

SIGNATURE = 300  # characters of a normalized signature
# Tracebacks parsed per group while looking for a culprit the PR changed: bounded, so a group of
# 5,000 cells costs what a group of 8 does.
CULPRIT_CANDIDATES = 8
REPO_ROOT = "src/transformers/"  # where the repository under test keeps its code
# torch.export names the user frame that raised, after the framework's own frames.
RAISED_BY = "The following call raised this error:"

ChangedLines = Mapping[str, Sequence[tuple[int, int]]]  # repository path → inclusive line ranges of the head

_QUALIFIED = re.compile(r"^(?:[A-Za-z_]\w*\.)+([A-Z]\w*)(?=:)")
# An absolute or home-relative path of two or more parts, or a dotted-folder relative one (`…/x/y.py`).
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2}|…)?(?:[\\/][\w.@+~-]+){2,}[\\/]?")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
# sympy symbols of torch's shape environment: s0 (backed), u0 (unbacked), zuf0/zf0 (unbacked floats).
_SYMBOL = re.compile(r"\b(zuf|zf|u|s|gw)\d+\b")  # …and pytest-xdist's worker ids (`gw0`)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]*\w)")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Culprit:
    """The repository frame a failure points at, as a `path:line` of the checkout under test."""

    path: str  # relative to the repository root: `src/transformers/models/bert/modeling_bert.py`
    line: int
    source: str = ""  # that line's text, as the traceback quotes it
    changed: bool = False  # the line lies inside the pull request's diff hunks
    url: str | None = None  # the line at the head commit, when the repository is known

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "source": self.source, "changed": self.changed, "url": self.url}

    @classmethod
    def from_json(cls, data: Mapping) -> Culprit:
        return cls(data["path"], int(data["line"]), data.get("source", ""), bool(data.get("changed")), data.get("url"))


@dataclass(frozen=True)
class Group:
    """Newly broken and new failing cells that fail at one stage with one normalized error signature."""

    stage: str  # the failing stage, or the error kind (build, harness, crash, timeout)
    signature: str  # the normalized first line of the error: numbers, paths, addresses, symbols masked
    cells: tuple[str, ...]  # cell ids, sorted; the first is the representative
    excerpt: str = ""  # the representative cell's own message, unnormalized
    culprit: Culprit | None = None  # None: no frame of the repository under test in the traceback
    repro: str = ""  # the command that reproduces the representative cell locally
    hint: Hint | None = None
    # The checkout's own pytest command for the representative, when the checkout's test judged it.
    test_repro: str = ""

    @property
    def representative(self) -> str:
        return self.cells[0]

    def to_json(self) -> dict:
        return {
            "stage": self.stage,
            "signature": self.signature,
            "cells": list(self.cells),
            "excerpt": self.excerpt,
            "culprit": self.culprit.to_json() if self.culprit else None,
            "repro": self.repro,
            "hint": self.hint.to_json() if self.hint else None,
            **({"test_repro": self.test_repro} if self.test_repro else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping) -> Group:
        culprit, hint = data.get("culprit"), data.get("hint")
        return cls(
            stage=data.get("stage", ""),
            signature=data["signature"],
            cells=tuple(data.get("cells", ())),
            excerpt=data.get("excerpt", ""),
            culprit=Culprit.from_json(culprit) if culprit else None,
            repro=data.get("repro", ""),
            hint=Hint.from_json(hint) if hint else None,
            test_repro=data.get("test_repro", ""),
        )


def signature(message: str, model_class: str | None = None) -> str:
    """The first line of an error with what differs between occurrences of one cause masked.

    Masked: the exception's module path, the cell's model class (`<class>`), file paths
    (`<path>`), addresses (`0x…`), symbol ids of torch's shape environment (`u…`, `s…`) and
    numbers (`#`): `u0 > 1` in one class and `u3 > 1` in another are the same guard.
    """
    line = next((part.strip() for part in (message or "").splitlines() if part.strip()), "")
    if model_class and model_class in line:  # checked first: a pattern per class would be compiled per class
        line = re.sub(rf"\b{re.escape(model_class)}\b", "<class>", line)
    return _masked(line)


@lru_cache(maxsize=4096)
def _masked(line: str) -> str:
    """`signature` after the class: one cause repeats one line thousands of times, so it is cached."""
    line = _QUALIFIED.sub(r"\1", line)
    line = _PATH.sub("<path>", line)
    line = _ADDRESS.sub("0x…", line)
    line = _SYMBOL.sub(r"\1…", line)
    line = _NUMBER.sub("#", line)
    line = _SPACE.sub(" ", line).strip()
    return line if len(line) <= SIGNATURE else line[: SIGNATURE - 1] + "…"


def group_key(result: CellResult) -> tuple[str, str]:
    return (result.stage or result.kind or "", signature(result.message, result.cell.model_class))


def culprit(details: str, changed_lines: ChangedLines | None = None) -> Culprit | None:
    """The frame of the repository under test a traceback points at; None when it has none.

    torch.export's "The following call raised this error" block names the user frame that
    raised; without one, the deepest repository frame of the traceback. A copy of the code
    in site-packages is an installed package, not the checkout under test.
    """
    if not details:
        return None
    at = details.rfind(RAISED_BY)
    if at >= 0:
        block = details[at + len(RAISED_BY) :].split("\n\n", 1)[0]
        found = _repository_frames(block)
        if found:
            return _with_change(found[-1], changed_lines)
    found = _repository_frames(details)
    return _with_change(found[-1], changed_lines) if found else None


_FRAME = re.compile(r'[ \t]*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in .*)?$')


def _repository_frames(text: str) -> list[Culprit]:
    """The traceback's frames in the repository under test, outermost first, each with its source line.

    Only lines that name `transformers` are matched: a traceback is mostly torch's own frames,
    and `str.find` skips them far faster than a match per line (grouping may add at most 20 %, README "Benchmarks").
    """
    frames = []
    at = text.find("transformers")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        match = _FRAME.match(text[start:end])
        at = text.find("transformers", end)
        if match is None:
            continue
        path = match["file"].replace("\\", "/")
        where = path.rfind("/" + REPO_ROOT)
        if path.startswith(REPO_ROOT):
            relative = path
        elif where >= 0 and "-packages/" not in path:
            relative = path[where + 1 :]
        else:
            continue
        following_end = text.find("\n", end + 1)
        following = text[end + 1 : following_end if following_end >= 0 else len(text)].strip()
        source = following if following and not following.startswith('File "') and set(following) - set("^~ ") else ""
        frames.append(Culprit(relative, int(match["line"]), source))
    return frames


def _with_change(found: Culprit, changed_lines: ChangedLines | None) -> Culprit:
    ranges = (changed_lines or {}).get(found.path, ())
    changed = any(start <= found.line <= end for start, end in ranges)
    return Culprit(found.path, found.line, found.source, changed)


def repro_command(cell: Cell, source: str | None = None, *, probe: bool = False) -> str:
    """The `export-bot run` line that runs `cell` and nothing else, from the root of the checkout under test.

    The cell id names every part of the cell (model class, backend, shape, path, cache, target), so
    `--cells` runs exactly it; the line is shell-quoted, to be pasted as printed.
    """
    parts = ["export-bot", "run", "--cells", cell.id]
    if probe:
        parts.append("--probe")  # the cell is skiplisted: run it anyway
    if source:
        # The run recorded where its checkout was; whoever reproduces runs from their own.
        parts += ["--source", "transformers-tests:." if source.startswith("transformers-tests:") else source]
    return shlex.join(parts)


def test_repro_command(result: CellResult) -> str:
    """The checkout's own test as a Transformers contributor runs it (`RUN_SLOW=1`: the export tests are `@slow`).

    The node id names the test method (file, test class, method), so pytest runs that method and no
    other; the method covers every class of its tester, the failing one among them. Empty when the
    checkout's test did not judge the cell.
    """
    if not result.test_id:
        return ""
    return "RUN_SLOW=1 " + shlex.join(["python", "-m", "pytest", result.test_id])


def group_failures(
    results: Iterable[CellResult],
    *,
    changed_lines: ChangedLines | None = None,
    source: str | None = None,
    repository_url: str | None = None,
    head_sha: str | None = None,
    skiplisted: frozenset[str] = frozenset(),
) -> tuple[Group, ...]:
    """One group per (stage, signature), the largest first.

    Each group's representative is the first of its cells (in id order) whose culprit the PR
    changed, else the first with any culprit, else its first cell; the repro runs that cell.
    `skiplisted` names failing cells a head skiplist covers: their repro needs `--probe`.
    """
    found: dict[tuple[str, str], list[CellResult]] = {}
    for result in results:
        found.setdefault(group_key(result), []).append(result)
    groups = []
    for (stage, sig), members in found.items():
        members.sort(key=lambda r: r.cell)
        first, blame = _representative(members, changed_lines)
        if blame is not None and repository_url and head_sha:
            url = f"{repository_url.rstrip('/')}/blob/{head_sha}/{blame.path}#L{blame.line}"
            blame = Culprit(blame.path, blame.line, blame.source, blame.changed, url)
        ids = [first.cell.id] + [r.cell.id for r in members if r is not first]
        groups.append(
            Group(
                stage=stage,
                signature=sig,
                cells=tuple(ids),
                excerpt=next((p.strip() for p in first.message.splitlines() if p.strip()), ""),
                culprit=blame,
                repro=repro_command(first.cell, source, probe=first.probe or first.cell.id in skiplisted),
                hint=hint_for(stage, sig),
                test_repro=test_repro_command(first),
            )
        )
    groups.sort(key=lambda g: (-len(g.cells), g.stage, g.signature))
    return tuple(groups)


def _representative(members: list[CellResult], changed_lines: ChangedLines | None):
    fallback = None
    for result in members[:CULPRIT_CANDIDATES]:
        blame = culprit(result.details, changed_lines)
        if blame is not None and blame.changed:
            return result, blame
        if blame is not None and fallback is None:
            fallback = (result, blame)
    return fallback or (members[0], None)
