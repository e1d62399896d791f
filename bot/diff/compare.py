"""The pure diff of docs/diff.md: base and head result sets in, a `Report` with a verdict out."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import attrgetter

from bot.cells import BACKENDS, SHAPES, Cell
from bot.diff.drift import DriftRule, drift, line_figures
from bot.diff.groups import ChangedLines, group_failures
from bot.diff.model import (
    CATEGORIES,
    EXCERPT,
    FOREIGN_NAME,
    FOREIGN_NAMES,
    BaselineAge,
    CellLine,
    Report,
    count_key,
    judges_of,
)
from bot.outcomes import CPU_PROPERTY, WEAK_COMPARED, CellResult, Status
from bot.results.model import ResultSet
from bot.results.reconcile import Reconciled
from bot.skiplist.model import Skiplists


@dataclass(frozen=True)
class MainHistory:
    """What main's per-commit baseline adds to each cell's base result (docs/diff.md): its newest result and flips."""

    newest: Mapping[Cell, CellResult]  # each cell's newest result on main
    flips: Mapping[Cell, int]  # cells that flipped on main within the flaky window, with how often
    age: BaselineAge


def diff(
    base: ResultSet | None,
    head: ResultSet,
    skiplists: Skiplists,
    rerun: ResultSet | None = None,
    *,
    base_sha: str | None = None,
    head_sha: str | None = None,
    run_url: str | None = None,
    changed_lines: ChangedLines | None = None,
    repository_url: str | None = None,
    group: bool = True,
    main: MainHistory | None = None,
    drift_rule: DriftRule | None = None,
    reconciled: Reconciled | None = None,
) -> Report:
    """Put every cell in one category and judge the head.

    `base=None` means no baseline: every head result is new and the verdict rests on the
    skiplists alone. A failing cell a head skiplist entry covers never fails the verdict.
    Newly broken and new failing cells are also grouped by cause (bot/diff/groups.py):
    `changed_lines` (the PR's hunks, from the selection) marks a culprit line the PR changed,
    `repository_url` links it at the head commit; `group=False` leaves the groups out.
    `main` (a per-commit baseline's history; `base` is then each cell's result at the merge base)
    sorts cells failing on main too as broken trunk and cells that flip on main as flaky.
    `drift_rule` (default: the documented thresholds) names passing cells whose figures moved.
    `reconciled` holds the head against its selection (bot/results/reconcile.py): a selected cell
    with no result is `missing`, and the verdict is then neutral. None means no selection (a sweep):
    only the base's cells the head lacks are said (not run). Either way a head holding no cell,
    where cells were expected, is neutral: its testcases were someone else's tests, never a pass.
    """
    found = _sort(head, base, rerun, skiplists, main, reconciled)
    categories = {name: tuple(lines) for name, lines in found.lines.items()}
    problems = _problems(head, base, rerun)
    rule = drift_rule or DriftRule()
    no_cells = not head.results and (reconciled is None or reconciled.selected > 0)
    verdict, headline, drifted = _verdict(categories, problems, base, head, rule)
    if verdict != "failure" and (no_cells or categories["missing"]):
        # Results the selection asked for and the head lacks are never read as a pass.
        verdict, headline = "neutral", _incomplete(head, reconciled, problems, no_cells)
    head_sha = head_sha or head.git_sha
    groups = _groups(found, head, changed_lines, repository_url, head_sha) if group else ()
    return Report(
        verdict=verdict,
        headline=headline,
        baseline=base is not None,
        categories=categories,
        infrastructure=tuple(found.infrastructure),
        needs_rerun=tuple(sorted(cell.id for cell in found.needs_rerun)),
        counts=_counts(found.counts),
        problems=problems,
        versions=head.versions,
        provenance=head.provenance,
        base_sha=base_sha or (base.git_sha if base is not None else None),
        head_sha=head_sha,
        run_url=run_url,
        cells=tuple(found.cells),
        non_cells=len(head.non_cells),
        foreign=tuple(_cut(name, FOREIGN_NAME) for name in head.non_cells[:FOREIGN_NAMES]),
        no_cells=no_cells,
        selected=reconciled.selected if reconciled is not None else None,
        missing_shards=reconciled.shards if reconciled is not None else (),
        duplicates=tuple(sorted({cell.id for cell in head.duplicates})),
        files=_files(base, head, rerun),
        setup_problems=_setup_problems(head),
        groups=groups,
        repository_url=repository_url,
        baseline_age=main.age if main is not None else None,
        judged_by=judges_of(r.judge for r in head.results.values()),
        cell_seconds=_cell_seconds(head),
        backend_seconds=_backend_seconds(head),
        drift=drifted,
        drift_fails=rule.fails,
    )


def _verdict(
    categories: dict[str, tuple[CellLine, ...]],
    problems: tuple,
    base: ResultSet | None,
    head: ResultSet,
    rule: DriftRule,
) -> tuple[str, str, tuple]:
    """The verdict, its headline and the drifted cells; drift fails an otherwise passing head when the rule says so."""
    verdict, headline = _judge(categories, problems, baseline=base is not None)
    drifted = drift(base.results, head.results, rule) if base is not None else ()
    if drifted and rule.fails and verdict == "success":
        verdict, headline = "failure", f"{_n(len({d.cell for d in drifted}), 'cell')} drifted beyond the thresholds"
    return verdict, headline, drifted


def _incomplete(head: ResultSet, reconciled: Reconciled | None, problems: tuple, no_cells: bool) -> str:
    """The headline of a head that lacks results: no cell at all, or selected cells with none."""
    if no_cells:
        found = f"{_n(len(head.non_cells), 'testcase')}, none a cell" if head.non_cells else "no testcase at all"
        return f"no cell in the head's results ({found}); no verdict"
    missing = len(reconciled.missing)
    lacking = f"{missing:,} of {reconciled.selected:,} selected cells {'has' if missing == 1 else 'have'} no result"
    more = f", and {_n(len(problems), 'problem')} (see below)" if problems else ""
    return f"results incomplete: {lacking}{more}; no verdict"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cell_seconds(head: ResultSet) -> float | None:
    """The cell time of the head: its cells' durations summed; None for a head with no cells."""
    return round(sum(r.duration or 0.0 for r in head.results.values()), 1) if head.results else None


def _backend_seconds(head: ResultSet) -> dict[str, float]:
    """The head's CPU seconds per backend (a cell that recorded none: its duration), the bot's backends first: the cost line."""
    spent: dict[str, float] = {}
    for cell, result in head.results.items():
        name = cell.backend or "other"  # a cell off the bot's backends (a name it could not place)
        spent[name] = spent.get(name, 0.0) + _cpu_seconds(result)
    order = sorted(spent, key=lambda name: (BACKENDS.index(name) if name in BACKENDS else len(BACKENDS), name))
    return {backend: round(spent[backend], 1) for backend in order}


def _cpu_seconds(result: CellResult) -> float:
    try:
        found = float(dict(result.properties).get(CPU_PROPERTY, ""))
    except ValueError:  # none recorded (an older runner, a plain pytest suite), or not a number
        return result.duration or 0.0
    return found if 0 <= found < 10**7 else result.duration or 0.0


def _problems(head: ResultSet, base: ResultSet | None, rerun: ResultSet | None) -> tuple:
    """The reading problems of every result set the diff was given: head's, then base's, then the re-run's."""
    return (
        tuple(head.problems)
        + tuple(base.problems if base is not None else ())
        + tuple(rerun.problems if rerun is not None else ())
    )


def _groups(
    found: _Sorted,
    head: ResultSet,
    changed_lines: ChangedLines | None,
    repository_url: str | None,
    head_sha: str | None,
) -> tuple:
    """The newly broken and new failing cells grouped by cause; none when nothing fails."""
    if not found.failing:
        return ()
    return group_failures(
        found.failing,
        changed_lines=changed_lines,
        source=_source(head),
        repository_url=repository_url,
        head_sha=head_sha,
        skiplisted=frozenset(found.skiplisted),
    )


def _files(base: ResultSet | None, head: ResultSet, rerun: ResultSet | None) -> dict[str, tuple]:
    """The files each given result set was read from, by role."""
    return {key: tuple(rs.files) for key, rs in (("base", base), ("head", head), ("rerun", rerun)) if rs is not None}


@dataclass
class _Sorted:
    """The head's cells put in their categories, with what the verdict, the re-run and the groups need."""

    lines: dict[str, list[CellLine]] = field(default_factory=lambda: {name: [] for name in CATEGORIES})
    cells: list[CellLine] = field(default_factory=list)  # one line per head cell
    needs_rerun: list[Cell] = field(default_factory=list)
    infrastructure: list[str] = field(default_factory=list)
    counts: dict[tuple[str, str], Counter] = field(default_factory=lambda: defaultdict(Counter))
    failing: list[CellResult] = field(default_factory=list)  # newly broken and new failing, for the groups
    skiplisted: set[str] = field(default_factory=set)


def _sort(
    head: ResultSet,
    base: ResultSet | None,
    rerun: ResultSet | None,
    skiplists: Skiplists,
    main: MainHistory | None,
    reconciled: Reconciled | None = None,
) -> _Sorted:
    """Every head cell in one category (or none), the selected cells it lacks as missing, the base's other
    cells it lacks as not run; sorted by id."""
    base_results = base.results if base is not None else {}
    rerun_results = rerun.results if rerun is not None else {}
    flips = main.flips if main is not None else {}
    found = _Sorted()
    for cell, result in head.results.items():
        before = base_results.get(cell)
        category, covered_by = _judged(cell, result, before, rerun_results.get(cell), skiplists, found, main)
        # One line per head cell, shared by `cells` and its category.
        line = _line(result, before, covered_by, flips.get(cell, 0) if category == "flaky" else 0)
        found.cells.append(line)
        found.counts[count_key(cell)][result.status] += 1
        if result.status is Status.ERROR and result.infrastructure:
            found.infrastructure.append(line.cell)
        if category is not None:
            found.lines[category].append(line)
    missing = frozenset(reconciled.missing if reconciled is not None else ())
    for cell in missing:
        before = base_results.get(cell)
        was = before.status.value if before is not None else None
        found.lines["missing"].append(CellLine(cell.id, Status.MISSING.value, base_status=was))
    for cell, before in base_results.items():
        # A cell the base could not build lost nothing by being absent from the head; a selected one is missing.
        if cell not in head.results and before.status is not Status.NOT_BUILDABLE and cell not in missing:
            found.lines["not_run"].append(CellLine(cell.id, "missing", base_status=before.status.value))
    # Sorted by id so a report does not depend on the order shards were read in.
    by_id = attrgetter("cell")
    for lines in found.lines.values():
        lines.sort(key=by_id)
    found.cells.sort(key=by_id)
    found.infrastructure.sort()
    return found


def _judged(cell, result, before, again, skiplists, found: _Sorted, main) -> tuple[str | None, str | None]:
    """A head cell's category and covering scope; a failure is noted for the re-run and the groups."""
    category = _category(result, before)
    # Failing on main's newest result: main itself is broken there, whether the break came before
    # the merge base or after it (the test merge holds main's newer commits too), so it is not this PR's.
    if category in ("still_failing", "newly_broken") and main is not None and _failing_on_main(main.newest.get(cell)):
        return "broken_trunk", None
    if category != "newly_broken" and category != "new_failing":
        return category, None
    covered_by = _covered_by(cell, result, skiplists)
    if again is not None and again.status not in _FAILING:
        return "flaky", covered_by
    if category == "newly_broken" and main is not None and main.flips.get(cell):
        return "flaky", covered_by  # flipped on main lately: its failure here says nothing about this PR
    if category == "newly_broken" and again is None:
        found.needs_rerun.append(cell)
    found.failing.append(result)
    if covered_by:
        found.skiplisted.add(cell.id)
    return category, covered_by


def _setup_problems(head) -> tuple[dict, ...]:
    """The head's test modules that did not import, one entry per cause (bot/setup_problems.py)."""
    from bot.setup_problems import setup_causes

    causes = setup_causes((dict(r.properties), r.message) for r in head.results.values() if r.properties)
    return tuple(
        {"origin": c.origin, "message": c.message, "modules": list(c.modules), "cells": c.cells} for c in causes
    )


def _source(head: ResultSet) -> str | None:
    """The model source the head ran with, when its shards agree on one."""
    sources = {suite.source for suite in head.suites if suite.source}
    return sources.pop() if len(sources) == 1 else None


_FAILING = frozenset((Status.FAILED, Status.ERROR))
_PASSING = frozenset((Status.PASSED, Status.PASSED_UNCOMPARED))
_NOT_RUN = frozenset((Status.SKIPPED, Status.NOT_BUILDABLE))


def _failing_on_main(newest: CellResult | None) -> bool:
    """Main's newest result of the cell fails where the head runs it (a probe of a skiplisted cell does not count,
    nor a crash or a timeout: they say nothing about the export, and would excuse any break of the cell)."""
    return newest is not None and newest.status in _FAILING and not newest.probe and not newest.infrastructure


def _category(result: CellResult, before: CellResult | None) -> str | None:
    """docs/diff.md's table; None for a cell that did what it did before (passing, or skipped)."""
    status = result.status
    if status is Status.NOT_BUILDABLE:
        return "not_buildable"  # the source cannot build the class: no verdict either way
    if result.probe:
        # A probe runs a skiplisted cell anyway: passing means the skip is obsolete, failing
        # means the skip is still needed. Neither is this PR's breakage.
        return "obsolete_skip" if status in _PASSING else None
    # A base skip, or a base probe of a skiplisted cell (main's sweep probes), is no
    # comparable result: the cell did not run there as the head runs it.
    ran_before = before is not None and before.status not in _NOT_RUN and not before.probe
    if status is Status.SKIPPED:
        return "newly_skipped" if ran_before else None
    if status in _FAILING:
        if not ran_before:
            return "new_failing"
        return "still_failing" if before.status in _FAILING else "newly_broken"
    if not ran_before:
        return "new_passing"
    return "newly_passing" if before.status in _FAILING else None


def _covered_by(cell: Cell, result: CellResult, skiplists: Skiplists) -> str | None:
    """The head skiplist scope that lists a failing cell, if any."""
    explanation = skiplists.explain(cell)
    if explanation.scope is None and result.stage == "compare" and explanation.exactness_scope:
        return explanation.exactness_scope  # only the comparison failed, and head drops it
    return explanation.scope


def _judge(categories, problems, *, baseline: bool) -> tuple[str, str]:
    uncovered = [line for name in ("newly_broken", "new_failing") for line in categories[name] if not line.covered_by]
    if uncovered:
        what = "newly broken" if baseline else "failing"
        return "failure", f"{_n(len(uncovered), 'cell')} {what} and not covered by the skiplists"
    if problems:
        # Incomplete results are never read as a pass.
        return "neutral", f"results incomplete: {_n(len(problems), 'problem')} (see below); no verdict"
    broken = len(categories["newly_broken"]) + len(categories["new_failing"])
    if broken:
        return "success", f"{_n(broken, 'failing cell')}, all covered by the skiplists"
    return "success", "no newly broken cells" if baseline else "no failing cells outside the skiplists (no baseline)"


def _line(result: CellResult, before: CellResult | None, covered_by: str | None, flips: int = 0) -> CellLine:
    message = result.message
    return CellLine(
        result.cell.id,
        result.status.value,
        result.stage,
        result.kind,
        excerpt(message) if message else "",
        result.probe,
        result.skip_scope,
        result.exactness_scope,
        before.status.value if before is not None else None,
        covered_by,
        _weak(result),
        _setup_module(result),
        flips,
        line_figures(result),
    )


def _setup_module(result: CellResult) -> str | None:
    """The test module whose import failed, for a build error that is a setup problem (never proposed)."""
    if result.status is not Status.ERROR or result.kind != "build":
        return None
    from bot.setup_problems import MODULE

    return dict(result.properties).get(MODULE)


def _weak(result: CellResult) -> str | None:
    """What a pass compared when it is less than values (docs/outcomes.md); None for a full comparison."""
    compared = result.compared if result.status is Status.PASSED else None
    return compared if compared in WEAK_COMPARED else None


def excerpt(message: str, limit: int = EXCERPT) -> str:
    first = message.strip().partition("\n")[0].strip()
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _counts(counts: dict[tuple[str, str], Counter]) -> dict[str, dict[str, int]]:
    """`backend/shape` → status → count, backends and shapes in the matrix's order."""
    order = {(b, s): i for i, (b, s) in enumerate((b, s) for b in BACKENDS for s in SHAPES)}
    keys = sorted(counts, key=lambda k: (order.get(k, len(order)), k))
    return {f"{b}/{s}": {status.value: n for status, n in counts[b, s].items()} for b, s in keys}


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"
