"""The bisect's decisions (docs/baseline.md, "Bisect"): which commit to run next, which culprits are found, what is left."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.cells import Cell


@dataclass(frozen=True)
class Range:
    """Cells that passed at `good` and fail at `bad`, with the commits one of which broke them."""

    good: str
    bad: str
    candidates: tuple[str, ...]  # main's commits after good up to and including bad, oldest first
    cells: tuple[Cell, ...]

    @property
    def found(self) -> bool:
        return len(self.candidates) == 1


@dataclass(frozen=True)
class Step:
    """One checkout to run: a commit and the cells of every range that wants it next."""

    commit: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Plan:
    step: Step | None  # None: nothing to run (all found, stuck, or out of budget)
    found: tuple[Range, ...]  # a culprit: one candidate left
    stuck: tuple[Range, ...]  # every candidate but the first failure was run without an answer
    left: tuple[Range, ...]  # still open: what a later bisect (or a bigger budget) would take on
    out_of_budget: bool = False


def ranges(regressions: Iterable, bisected: frozenset[Cell] = frozenset()) -> tuple[Range, ...]:
    """Regressions grouped by (good, bad, candidates): cells sharing a range are bisected together.

    Regressions whose culprit is already known (one candidate, or the push that broke them ran
    them alone) are left out, unless `bisected` names their cell (a bisect under way reports what
    it found); so are those with no commit between good and bad in main's chain.
    """
    by_range: dict[tuple, list[Cell]] = {}
    for r in regressions:
        if (r.culprit is None or r.cell in bisected) and r.candidates:
            by_range.setdefault((r.good.commit, r.bad.commit, tuple(r.candidates)), []).append(r.cell)
    found = [Range(good, bad, candidates, tuple(sorted(cells))) for (good, bad, candidates), cells in by_range.items()]
    found.sort(key=lambda r: (-len(r.cells), r.good, r.bad))
    return tuple(found)


def next_commit(span: Range, tried: frozenset[tuple[str, Cell]]) -> str | None:
    """The candidate halving the range, or the nearest to it not yet run for these cells; None when none is left.

    The first failure (the last candidate) is known to fail, so it is never run again. A commit
    run without an answer (the cells did not run there, or crashed) stays in the range, as git
    bisect's `skip` leaves it, and the next nearest is tried instead.
    """
    testable = range(len(span.candidates) - 1)
    middle = (len(span.candidates) - 1) // 2
    untried = [i for i in testable if any((span.candidates[i], cell) not in tried for cell in span.cells)]
    if not untried:
        return None
    return span.candidates[min(untried, key=lambda i: (abs(i - middle), i))]


def plan(spans: Sequence[Range], tried: frozenset[tuple[str, Cell]], *, steps_left: int, seconds_left: float) -> Plan:
    """What to do next over all open ranges: one commit to run, holding every range that wants it."""
    found = tuple(s for s in spans if s.found)
    stuck, left = _open_ranges(spans, tried)
    spans_left = tuple(s for s, _ in left)
    if not left:
        return Plan(None, found, stuck, ())
    if steps_left <= 0 or seconds_left <= 0:
        return Plan(None, found, stuck, spans_left, out_of_budget=True)
    commit = left[0][1]  # the range of the most cells first
    cells = sorted({cell for s, wants in left if wants == commit for cell in s.cells})
    return Plan(Step(commit, tuple(cells)), found, stuck, spans_left)


def _open_ranges(spans: Sequence[Range], tried: frozenset[tuple[str, Cell]]):
    """The open ranges no commit is left to try in, and the others with the commit each wants next."""
    wanted = [(s, next_commit(s, tried)) for s in spans if not s.found]
    stuck = tuple(s for s, commit in wanted if commit is None)
    return stuck, tuple((s, commit) for s, commit in wanted if commit is not None)


def describe(outcome: Plan) -> list[str]:
    """Lines for the log and the job summary: culprits found, ranges left and why."""
    lines = [f"culprit {s.candidates[0][:12]}: {len(s.cells)} cells" for s in outcome.found]
    for s in outcome.stuck:
        lines.append(
            f"undecided between {s.good[:12]} and {s.bad[:12]} ({len(s.candidates)} commits): "
            f"the cells gave no result at the commits between; {len(s.cells)} cells"
        )
    why = "out of budget" if outcome.out_of_budget else "pending"
    for s in outcome.left:
        lines.append(
            f"{why}: between {s.good[:12]} and {s.bad[:12]} ({len(s.candidates)} commits left), {len(s.cells)} cells"
        )
    return lines


# --- installing each commit -------------------------------------------------------------------

# What `pip install -e .` reads: dependency pins (setup.py's `_deps`, `install_requires`, extras), entry
# points and the build backend. Transformers pins its dependencies in setup.py and generates
# dependency_versions_table.py from it, so these files are the pins as installed.
PACKAGING = ("setup.py", "pyproject.toml", "setup.cfg")


def pins_of(files: Mapping[str, bytes | None]) -> str:
    """One fingerprint of a commit's packaging files (`PACKAGING`, None where absent)."""
    digest = hashlib.sha256()
    for name in PACKAGING:
        data = files.get(name)
        digest.update(f"{name}:{-1 if data is None else len(data)}:".encode())
        digest.update(data or b"")
    return digest.hexdigest()


def install_args(pins: str, installed: str | None) -> tuple[str, ...]:
    """The `pip install -e` options for a commit whose packaging is `pins`, `installed` the last installed one.

    The same packaging files: the dependencies installed already are the commit's own, so `--no-deps`
    only points the editable install at the commit's checkout (seconds, and nothing the commit does
    not ask for changes). Changed files, or nothing installed yet (`installed` None): a full install,
    so a commit that moves a pin or an entry point is run with what it asks for. The files are
    compared whole rather than parsed: a change of setup.py that moves no pin costs one full
    install, a parser that misses a pin would judge the commit with the wrong versions.
    """
    return ("--no-deps",) if installed == pins else ()
