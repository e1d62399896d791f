"""The sticky PR comment: pure markdown from a report, shrunk to fit GitHub's comment limit.

The same comment as bot/publish/comment.py, seen from the report stage: this module writes its
text, that one posts and edits it on GitHub.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import quote

from bot.diff.model import CellLine, Report
from bot.diff.proposal import Proposal, ProposedEdit
from bot.report.folds import Folds, fold_proposal, fold_summary, unseen_backends
from bot.report.markdown import (
    TITLES,
    VERDICT_ICON,
    baseline_lines,
    cause_heading,
    cause_lines,
    code,
    counts_section,
    cut,
    defuse,
    drift_section,
    escape,
    flaky_note,
    footer,
    n,
    not_buildable_lines,
    points_into,
    repository_of,
    sentence,
    the_cells,
    weak_passes,
)
from bot.report.reconciled import FOLD_ABOVE, foreign_line, missing_heading, no_cell_lines, rerun_hint

COMMENT_MARKER = "<!-- export-bot:conformance -->"
# The sticky of `/export-check` runs that look at part of the PR: kept apart from the gate's, so
# neither replaces the other and each is ordered by its own runs.
COMMAND_MARKER = "<!-- export-bot:command -->"
COMMAND_NOTE = (
    "_A `/export-check` run of part of this PR: its verdict is the `export-conformance/command` status; "
    "the required `export-conformance` check stays the PR's own run's._"
)
GITHUB_LIMIT = 65536
_NOTES = 10  # the selection's notes shown at most (each a setting or a skiplist entry the PR edits)
# Shown as lists in the comment body; the rest fold into <details>.
MAIN_LISTS = ("newly_broken", "new_failing", "flaky", "newly_passing", "obsolete_skip")
DETAIL_LISTS = ("still_failing", "new_passing", "newly_skipped", "not_run")
# Lists whose cells the report groups by cause (bot/diff/groups.py): shown as causes, not cell by cell.
GROUPED_LISTS = ("newly_broken", "new_failing")


@dataclass(frozen=True)
class _Budget:
    items: int  # lines per main list (0: the list becomes a count)
    details: int  # lines per <details> list
    excerpt: int  # characters of an error message
    patch: int  # lines of the proposed patch


# Tried in turn until the comment fits: details shrink first, then the lists turn into counts.
_ALL = 10**9  # no cut (in practice bounded by max_chars: see render_comment)
_BUDGETS = (
    _Budget(_ALL, _ALL, 200, _ALL),
    _Budget(_ALL, 30, 200, _ALL),
    _Budget(_ALL, 0, 200, 400),
    _Budget(_ALL, 0, 200, 100),
    _Budget(100, 0, 160, 60),
    _Budget(25, 0, 120, 30),
    _Budget(5, 0, 80, 10),
    _Budget(0, 0, 0, 0),
)
# What a cut list's cells are called in "…and 1,234 more newly broken cells".
_NOUNS = {
    "newly_broken": ("newly broken cell", "newly broken cells"),
    "new_failing": ("new failing cell", "new failing cells"),
    "flaky": ("flaky cell", "flaky cells"),
    "newly_passing": ("newly passing cell", "newly passing cells"),
    "obsolete_skip": ("obsolete skip", "obsolete skips"),
    "new_passing": ("new passing cell", "new passing cells"),
    "broken_trunk": ("cell failing on main too", "cells failing on main too"),
    "still_failing": ("pre-existing failure", "pre-existing failures"),
    "newly_skipped": ("newly skipped cell", "newly skipped cells"),
    "not_run": ("cell not run", "cells not run"),
    "missing": ("cell with no result", "cells with no result"),
    "not_buildable": ("cell not buildable", "cells not buildable"),
}


def render_comment(
    report: Report,
    *,
    max_chars: int = GITHUB_LIMIT,
    repository_url: str | None = None,
    dashboard_url: str | None = None,
    elapsed: float | None = None,
) -> str:
    """The comment body; never longer than `max_chars`, and it says what it left out.

    Links are kept only into `repository_url` (the publisher's own, when it knows it; else the
    report's): every other URL a report carries is shown as text (docs/reports.md). With
    `dashboard_url` (the publisher's setting, never the report's), each cell named links to its
    history there; `elapsed` (seconds from the push, from GitHub's record of the run) joins the cost.
    """
    # A list line takes at least 30 characters, so more than max_chars // 30 lines never fit:
    # capping there keeps the first attempts cheap at 30,000 cells.
    cap = max(max_chars // 30, 1)
    # What every attempt shares: computed once, not once per budget.
    fixed = replace(_Fixed.of(report, repository_of(report, repository_url)), dashboard=dashboard_url, elapsed=elapsed)
    for budget in _BUDGETS:
        budget = _Budget(min(budget.items, cap), min(budget.details, cap), budget.excerpt, min(budget.patch, cap))
        text = _compose(report, budget, fixed)
        if len(text) <= max_chars:
            return text
    # Only pathological input (thousands of problems, a huge version table) lands here.
    note = "\n\n_Cut at GitHub's comment limit; the full report is in the job summary and report.json._\n"
    kept = text[: max(max_chars - len(note), 0)]
    # Whole lines only: a link cut in half would leave its URL as bare text, which GitHub links.
    return kept[: kept.rfind("\n") + 1] + note[:max_chars]


@dataclass(frozen=True)
class _Fixed:
    """The parts of the comment no budget changes."""

    weak: str
    grouped: frozenset[str]  # cells the groups list
    category: dict  # a grouped list's cell id → (list name, its line)
    repository: str | None  # links point only into it
    where: str  # the job summary, linked when the run is the repository's
    window: int | None  # the results on main a flip counts within, with a per-commit baseline
    folds: Folds  # the causes in order, and the proposed skips folded under them
    dashboard: str | None = None  # the dashboard's address, when it is on: each cell named links to its history
    elapsed: float | None = None  # seconds from the push to this comment, when the publisher knows them

    @classmethod
    def of(cls, report: Report, repository: str | None) -> _Fixed:
        category = {line.cell: (name, line) for name in GROUPED_LISTS for line in report.category(name)}
        grouped = frozenset(cell for group in report.groups for cell in group.cells)
        linked = points_into(report.run_url, repository)
        where = f"[job summary]({report.run_url})" if linked else "job summary"
        window = report.baseline_age.flaky_window if report.baseline_age is not None else None
        return cls(weak_passes(report), grouped, category, repository, where, window, fold_proposal(report))


def _opening(report: Report, budget: _Budget, fixed: _Fixed, left_out: list[str]) -> list[str]:
    """The verdict, why, what could not be read, the counts, and the one-line notes below them."""
    where = fixed.where
    out = [COMMENT_MARKER, f"## {VERDICT_ICON.get(report.verdict, '')} Export conformance: **{report.verdict}**", ""]
    out.append(sentence(report.headline))
    if report.selection:
        out.append(f"Selected: {escape(cut(report.selection, 1000))}.")
    if report.selection_notes:  # the settings this run was not judged by, and the skiplist edits it was
        shown = report.selection_notes[:_NOTES]
        more = [f"- …and {len(report.selection_notes) - _NOTES:,} more"] if len(report.selection_notes) > _NOTES else []
        out += ["", *(f"- {escape(cut(note, 300))}" for note in shown), *more, ""]
    out += baseline_lines(report)
    if report.problems:
        out += ["", f"### ⚠️ Results incomplete ({n(len(report.problems), 'problem')})", ""]
        shown = report.problems[: max(budget.items, 5)]
        out += [f"- {escape(cut(str(p), 400))}" for p in shown]
        if len(shown) < len(report.problems):
            more = len(report.problems) - len(shown)
            out.append(f"- …and {n(more, 'more problem')} in the {where}")
            left_out.append(n(more, "problem"))
    out += counts_section(report)
    if report.setup_headline:
        out.append(f"⚠️ {escape(cut(report.setup_headline, 600))}; fix the checkout's test setup.")
    if fixed.weak:
        out.append(fixed.weak)
    if report.infrastructure:
        out.append(
            f"💥 {n(len(report.infrastructure), 'cell')} crashed or timed out (infrastructure, not conformance)."
        )
    if report.not_buildable:
        out += ["", *not_buildable_lines(report, classes=5, reasons=max(min(budget.items, 10), 1))]
    return out


def _compose(report: Report, budget: _Budget, fixed: _Fixed) -> str:
    left_out: list[str] = []
    where = fixed.where
    names = _Names(frozenset(report.needs_rerun), fixed.dashboard)
    out = _opening(report, budget, fixed, left_out)
    out += _reconciliation(report, budget, names, where, left_out)
    out += _broken_trunk(report, budget, names, where, left_out)
    grouped = fixed.grouped
    for name in MAIN_LISTS:
        lines = report.category(name)
        if name in GROUPED_LISTS and grouped:
            if name == GROUPED_LISTS[0]:
                out += _causes(report, budget, fixed, names, left_out)
            lines = tuple(line for line in lines if line.cell not in grouped)  # a report's groups cover them all
        if lines:
            out += ["", f"### {TITLES[name]} ({len(lines):,})", ""]
            out += _list(name, lines, budget.items, budget.excerpt, names, where, left_out, window=fixed.window)
    drifted = drift_section(report, budget.details, name=names.name)
    out += ["", *drifted] if drifted else []
    out += _proposal(report, fixed.folds, budget, left_out)
    for name in DETAIL_LISTS:
        lines = report.category(name)
        if lines:
            out += ["", f"<details><summary>{TITLES[name]} ({len(lines):,})</summary>", ""]
            out += _list(name, lines, budget.details, min(budget.excerpt, 120), names, where, left_out)
            out += ["", "</details>"]
    out += ["", *footer(report, fixed.repository, elapsed=fixed.elapsed)]
    if left_out:
        out += [
            "",
            f"_Shortened to fit the comment limit: left out {', '.join(left_out)}; "
            f"everything is in the {where} and report.json._",
        ]
    return "\n".join(out) + "\n"


def _reconciliation(report: Report, budget: _Budget, names: _Names, where: str, left_out: list[str]) -> list[str]:
    """The head held against its selection: no cell at all, the selected cells with no result (folded when
    many) and what to re-run for them, and the testcases that are not cells (bot/report/reconciled.py)."""
    out = ["", *no_cell_lines(report)] if report.no_cells else []
    heading, lines = missing_heading(report), report.category("missing")
    if heading:
        out += ["", heading, "", rerun_hint(report), ""]
        listed = _list("missing", lines, budget.items, 0, names, where, left_out)
        if len(lines) > FOLD_ABOVE and budget.items:
            listed = [f"<details><summary>{the_cells(len(lines))}</summary>", "", *listed, "", "</details>"]
        out += listed
    foreign = foreign_line(report)
    return [*out, "", foreign] if foreign else out


def _broken_trunk(report: Report, budget: _Budget, names: _Names, where: str, left_out: list[str]) -> list[str]:
    """One line that says how many cells fail on main too (never this PR's), their list folded under it."""
    lines = report.category("broken_trunk")
    if not lines:
        return []
    one = len(lines) == 1
    said = (
        f"🚨 {n(len(lines), 'cell')} {'fails' if one else 'fail'} on main too (in main's newest results): "
        f"not this PR's doing, the verdict leaves {'it' if one else 'them'} out"
    )
    out = ["", f"<details><summary>{said}</summary>", ""]
    out += _list("broken_trunk", lines, budget.details, min(budget.excerpt, 120), names, where, left_out)
    return [*out, "", "</details>"]


def _list(name, lines, limit, excerpt, names, where, left_out, *, window: int | None = None) -> list[str]:
    shown = lines[:limit]
    out: list[str] = []
    if shown:
        with_error = name in ("newly_broken", "new_failing", "still_failing", "broken_trunk", "flaky")
        if with_error:
            out += ["| cell | stage | error |", "|---|---|---|"]
            for line in shown:
                out.append(
                    f"| {_cell(line, names, table=True)}{flaky_note(line, window)} | "
                    f"{escape(cut(line.stage or line.kind or '', 40))} | "
                    f"{escape(cut(line.message, excerpt)) if excerpt else ''} |"
                )
        else:
            out += [f"- {_cell(line, names)}{_aside(name, line)}" for line in shown]
    if len(shown) < len(lines):
        more = len(lines) - len(shown)
        one, many = _NOUNS[name]
        counted = n(more, one, many)
        out += ["", f"…and {more:,} more: see the {where}." if shown else f"{counted}: see the {where}."]
        left_out.append(counted)
    return out


def _causes(report: Report, budget: _Budget, fixed: _Fixed, names: _Names, left_out: list[str]) -> list[str]:
    """Newly broken and new failing cells as causes: one block per group, its cells folded.

    Causes on a line this PR changed come first, each with its proposed skips folded under it
    (bot/report/folds.py). The cells named across all groups share one budget: many groups of
    many cells stay linear.
    """
    where = fixed.where
    present = [name for name in GROUPED_LISTS if report.category(name)]
    title = TITLES[present[0]] if len(present) == 1 else "Newly broken and new failing"
    groups = fixed.folds.groups
    cells = sum(len(group.cells) for group in groups)
    out = ["", f"### {title}, by cause ({n(cells, 'cell')}, {n(len(groups), 'cause')})"]
    shown = groups[: budget.items]
    unlisted, room = 0, budget.items
    for index, group in enumerate(shown, 1):
        out += ["", cause_heading(index, group), "", *cause_lines(group, budget.excerpt, fixed.repository)]
        listed = group.cells[: max(room, 0)]  # the cells of the main lists they replace
        room -= len(listed)
        out += _group_cells(group, listed, fixed, names)
        unlisted += len(group.cells) - len(listed)
        if index - 1 in fixed.folds.entries:
            out += _fold(report, fixed, index - 1, budget, left_out)
    if unlisted:
        left_out.append(f"the names of {n(unlisted, 'cell')} in the causes shown")
    if len(shown) < len(groups):
        rest = groups[len(shown) :]
        more = n(len(rest), "more cause")
        out += ["", f"…and {more} ({n(sum(len(g.cells) for g in rest), 'cell')}): see the {where}."]
        left_out.append(more.replace("more ", ""))
    return out


def _group_cells(group, listed: tuple[str, ...], fixed: _Fixed, names: _Names) -> list[str]:
    """A cause's cells, folded: each with its list's name."""
    if not listed:
        return []
    out = ["", f"<details><summary>{the_cells(len(group.cells))}</summary>", ""]
    for cell_id in listed:
        name, line = fixed.category.get(cell_id, ("", None))
        label = name.replace("_", " ")
        out.append(f"- {_cell(line, names) if line else names.name(cell_id)}" + (f" — {label}" if label else ""))
    if len(listed) < len(group.cells):
        out.append(f"- …and {n(len(group.cells) - len(listed), 'more cell')}: see the {fixed.where}")
    return [*out, "", "</details>"]


def _fold(report: Report, fixed: _Fixed, position: int, budget: _Budget, left_out: list[str]) -> list[str]:
    """The skips proposed for a cause the PR's own line broke, under "if this break is intended"."""
    proposal = report.proposal
    edits = tuple(proposal.entries[i] for i in fixed.folds.entries[position])
    out = ["", f"<details><summary>{escape(fold_summary(edits))}</summary>", ""]
    out += _entry_lines([edit.to_json() for edit in edits], budget, left_out)
    if fixed.folds.patch_under == position:
        note = unseen_backends(report)
        out += ["", note] if note else []
        out += _patch_lines(proposal.patch, budget, left_out)
    return [*out, "", "</details>"]


@dataclass(frozen=True)
class _Names:
    """How a cell is named: its id as code, linked to its history on the dashboard when there is one."""

    pending: frozenset[str]  # newly broken cells no re-run has confirmed yet
    dashboard: str | None = None  # the dashboard's address (docs/reports.md): `#cell=ID` opens a cell's panel

    def __contains__(self, cell: str) -> bool:
        return cell in self.pending

    def name(self, cell: str, *, table: bool = False) -> str:
        text = code(cut(cell, 200), table=table)
        return f"[{text}]({self.dashboard}#cell={quote(cell, safe='')})" if self.dashboard else text


def _cell(line: CellLine, names: _Names, *, table: bool = False) -> str:
    text = names.name(line.cell, table=table)
    if line.covered_by:
        text += f" (skiplisted: {code(cut(line.covered_by, 100), table=table)})"
    if line.cell in names:
        text += " (not yet re-run)"
    if line.kind in ("crash", "timeout"):
        text += " 💥"
    return text


def _aside(name: str, line: CellLine) -> str:
    if name == "obsolete_skip" and line.skip_scope:
        return f" — skip scope {code(cut(line.skip_scope, 100))}"
    if name in ("newly_passing", "not_run", "missing") and line.base_status:
        return f" (was {escape(cut(line.base_status, 40))})"
    if name == "newly_skipped" and line.skip_scope:
        return f" — {code(cut(line.skip_scope, 100))}"
    return ""


def _proposal(report: Report, folds: Folds, budget: _Budget, left_out: list[str]) -> list[str]:
    """The proposal's entries not folded under a cause, the uncoverable cells, and the patch."""
    typed = report.proposal
    if typed is None or not _headed(typed, folds):
        return []
    entries = [edit.to_json() for i, edit in enumerate(typed.entries) if i not in folds.folded]
    out = ["", "### Proposed skiplist change", ""]
    out += [f"Scopes follow {escape(typed.walk)}.", ""] if typed.walk else []
    out += _entry_lines(entries, budget, left_out)
    if folds.folded:
        out.append(f"- {n(len(folds.folded), 'entry', 'entries')} for the causes above, folded under them")
    note = unseen_backends(report)
    out += ["", note] if note else []
    out += _uncoverable_lines([u.to_json() for u in typed.uncoverable], budget, left_out)
    patch = _patch_lines(typed.patch, budget, left_out)
    if patch and folds.folded and not entries:
        patch = _folded_patch(patch, tuple(typed.entries[i] for i in folds.folded))
    return out + patch


def _headed(proposal: Proposal, folds: Folds) -> bool:
    """An empty proposal gets no heading; one folded whole under its cause gets none either."""
    return bool(proposal.entries or proposal.uncoverable or proposal.patch) and folds.patch_under is None


def _folded_patch(patch: list[str], folded: tuple[ProposedEdit, ...]) -> list[str]:
    """The patch of entries all folded under their causes, itself folded under what it would skip."""
    summary = escape(fold_summary(folded, several=True))
    return ["", f"<details><summary>{summary}: the patch</summary>", *patch, "", "</details>"]


def _entry_lines(entries: list, budget: _Budget, left_out: list[str]) -> list[str]:
    out = [f"- {_entry(entry)}" for entry in entries[: max(budget.items, 0)]]
    if len(entries) > budget.items:
        out.append(f"- …and {n(len(entries) - budget.items, 'more entry', 'more entries')} (see report.json)")
        left_out.append(n(len(entries) - budget.items, "proposed entry", "proposed entries"))
    return out


def _uncoverable_lines(uncoverable: list, budget: _Budget, left_out: list[str]) -> list[str]:
    if not uncoverable:
        return []
    out = [
        "",
        f"{n(len(uncoverable), 'failing cell')} no skiplist scope can cover without also skipping "
        "a passing cell (fix these, or skip them by hand):",
    ]
    for item in uncoverable[: budget.items]:
        cell = item.get("cell", "?") if isinstance(item, dict) else str(item)
        finest = item.get("finest_scope") if isinstance(item, dict) else None
        out.append(
            f"- {code(cut(str(cell), 200))}" + (f" (finest scope {code(cut(str(finest), 100))})" if finest else "")
        )
    if len(uncoverable) > budget.items:
        left_out.append(n(len(uncoverable) - budget.items, "uncoverable cell"))
    return out


def _patch_lines(patch: str, budget: _Budget, left_out: list[str]) -> list[str]:
    """The patch as a `diff` block, cut to the budget."""
    patch = (patch or "").rstrip("\n")
    if not patch:
        return []
    lines = patch.split("\n")
    shown = lines[: budget.patch]
    out = []
    # A fence longer than any backtick run inside the patch keeps it one block.
    fence = "`" * max(3, max((len(r) for r in _backtick_runs(patch)), default=0) + 1)
    if shown:
        out += ["", f"{fence}diff", *(defuse(line) for line in shown), fence]
    if len(shown) < len(lines):
        out.append(f"…{n(len(lines) - len(shown), 'more patch line')}: run `export-bot propose` or see report.json.")
        left_out.append(n(len(lines) - len(shown), "patch line"))
    return out


def _entry(entry) -> str:
    """One line per proposed edit, in the shape `export-bot propose` writes (bot/diff/proposal.py)."""
    if not isinstance(entry, dict):
        return escape(cut(str(entry), 300))
    action, scope, model_class = entry.get("action", "change"), entry.get("scope", "?"), entry.get("model_class", "?")
    evidence = _listed(entry.get("evidence"))
    if action == "add":
        text = f"**add** {code(cut(str(model_class), 100))} to {code(cut(str(scope), 100))}"
        if entry.get("reason"):
            text += f": {escape(cut(str(entry['reason']), 200))}"
    elif action == "narrow":
        targets = ", ".join(code(cut(str(s), 100)) for s in _listed(entry.get("new_scopes"))[:20]) or "narrower scopes"
        text = f"**narrow** {code(cut(str(model_class), 100))} from {code(cut(str(scope), 100))} to {targets}"
    else:
        text = (
            f"**{escape(cut(str(action), 40))}** {code(cut(str(model_class), 100))} from {code(cut(str(scope), 100))}"
        )
    if evidence:
        text += (
            f" ({n(len(evidence), 'failing cell')})"
            if action == "add"
            else f" ({n(len(evidence), 'cell')} passed in probe)"
        )
    return text


def _listed(value) -> list:
    """A proposal's list, or none: the proposal is the proposer's, and a report may hold any JSON there."""
    return value if isinstance(value, list) else []


def _backtick_runs(text: str) -> list[str]:
    return re.findall("`+", text)
