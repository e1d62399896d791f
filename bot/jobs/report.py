"""The report job, shared by `check`, `report` and `diff`: results → diff → confirming re-run → propose → render → files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from bot.cells import SHAPES, Cell, kept_by
from bot.diff import diff
from bot.diff.drift import DriftRule
from bot.diff.model import Report
from bot.errors import BotError
from bot.files import write_files
from bot.jobs.inputs import baseline_file, read_junit, read_main_baseline
from bot.jobs.skiplist import followed_walk
from bot.propose.proposal import propose
from bot.report import render_comment, render_summary
from bot.results.model import ResultSet
from bot.results.reconcile import Reconciled, reconcile
from bot.select.base_settings import comment_notes
from bot.select.selection_file import changed_lines_of, read_selection_document
from bot.settings import Settings
from bot.setup_problems import nothing_built
from bot.skiplist.model import LoadedSkiplists

# Runs the given cells once more and writes their JUnit to the path (the only step that imports torch).
Rerunner = Callable[[tuple[Cell, ...], Path], None]


@dataclass(frozen=True)
class Selected:
    """What the selection said: why these cells run, which, and the PR's changed lines (docs/selection.md)."""

    summary: str | None = None
    cells: Collection[Cell] | None = None  # None: a sweep, every base cell counts
    changed_lines: Mapping | None = None
    notes: tuple[str, ...] = ()  # the PR's settings edits (after the merge) and skiplist edits (now)
    split: tuple[tuple[str, ...], ...] = ()  # the cell ids of each shard `run --shard I/N` runs, when said


@dataclass(frozen=True)
class ReportInputs:
    head: tuple[Path, ...]
    base: tuple[Path, ...] = ()  # none: no baseline, the skiplists alone judge
    rerun: tuple[Path, ...] = ()  # a confirming re-run that already ran (`diff --rerun`)
    selected: Selected = Selected()
    expect_shards: int | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    tested_sha: str | None = None  # the commit the cells ran on when not the head: the PR's test merge
    run_url: str | None = None
    skip_missing: bool = False  # `report`: a path that is not there is left out (no baseline yet)
    # With main's per-commit baseline (baseline.json) as the base: the PR's merge base, and the settings
    # that say when a base result is old and how many results on main a flip counts within.
    merge_base: str | None = None
    stale_days: float = Settings.stale_days
    flaky_window: int = Settings.flaky_window
    source: str | None = None  # the model source: a checkout's own export tests walk their own scopes
    drift: DriftRule = DriftRule()  # the thresholds of the drift section (drift_rule(settings))
    # The backends the repository gates on (`[tool.export-bot] backends`, empty: all): `run` leaves a
    # selection's cells on others out, so they are not expected in the head (bot/run/planning.py).
    backends: tuple[str, ...] = ()

    @classmethod
    def under(cls, settings: Settings, **given) -> ReportInputs:
        """The inputs with what `[tool.export-bot]` decides filled in from `settings` (the model source
        unless `given` names one): `report`, `diff` and `check` judge alike under the same settings."""
        from_settings = {
            "source": settings.source,
            "stale_days": settings.stale_days,
            "flaky_window": settings.flaky_window,
            "drift": drift_rule(settings),
            "backends": settings.backends,
        }
        return cls(**(from_settings | given))


def drift_rule(settings: Settings) -> DriftRule:
    """The drift thresholds `[tool.export-bot]` sets (docs/diff.md)."""
    return DriftRule(
        error_factor=settings.drift_error_factor,
        error_floor=settings.drift_error_floor,
        time_factor=settings.drift_time_factor,
        time_seconds=settings.drift_time_seconds,
        artifact_factor=settings.drift_artifact_factor,
        fails=settings.drift_fails,
    )


@dataclass(frozen=True)
class ReportOutputs:
    """Where the files go; None leaves one out. All are written, or none (bot.files.write_files)."""

    report: Path | None = None
    comment: Path | None = None
    summary: Path | None = None
    patch: Path | None = None  # written only when a patch is proposed
    append_summary: Path | None = None  # e.g. $GITHUB_STEP_SUMMARY
    rerun_junit: Path | None = None  # where the confirming re-run writes, when one is needed

    @classmethod
    def in_folder(cls, out: Path, append_summary: Path | None = None) -> ReportOutputs:
        """Every file in `out` under its usual name, as `check` and `report` write them."""
        return cls(
            report=out / "report.json",
            comment=out / "comment.md",
            summary=out / "summary.md",
            patch=out / "skiplists.patch",
            append_summary=append_summary,
            rerun_junit=out / "rerun.xml",
        )


@dataclass(frozen=True)
class ReportOutcome:
    report: Report
    comment: str
    patch: str
    written: tuple[Path, ...] = ()
    nothing_built: bool = False  # every attempted head cell is a build error: a broken setup
    rerun_junit: Path | None = None


def make_report(
    inputs: ReportInputs,
    outputs: ReportOutputs,
    skiplists: LoadedSkiplists,
    *,
    rerun: Rerunner | None = None,
    echo: Callable[[str], None] = lambda line: None,
) -> ReportOutcome:
    """Judge the head against the base, confirm newly broken cells once, propose, and write the files.

    `skiplists` are the command's, read once at its edge: the diff judges by them and the proposal edits them.
    """
    head, base, main = _read_inputs(inputs, echo)
    rerun_results = read_junit(_paths(inputs.rerun, inputs.skip_missing)) if inputs.rerun else None
    context = dict(
        base_sha=inputs.base_sha,
        head_sha=inputs.head_sha,
        run_url=inputs.run_url,
        changed_lines=inputs.selected.changed_lines,
        repository_url=repository_url(),
        main=main,
        drift_rule=inputs.drift,
        reconciled=_reconciled(head, inputs),
    )
    report = diff(base, head, skiplists.skiplists, rerun_results, **context)
    rerun_junit = None
    if report.needs_rerun and rerun is not None and outputs.rerun_junit is not None:
        # docs/diff.md: a newly broken cell is re-run once before it is reported; disagreement is flaky.
        rerun_junit = outputs.rerun_junit
        cells = tuple(Cell.parse(cell_id) for cell_id in report.needs_rerun)
        echo(f"re-running {len(cells)} newly broken cells once to confirm them → {rerun_junit}")
        rerun(cells, rerun_junit)
        report = diff(base, head, skiplists.skiplists, read_junit([rerun_junit]), **context)
    report = replace(
        report.with_selection(inputs.selected.summary).with_created(created_now()),
        tested_sha=inputs.tested_sha,
        selection_notes=inputs.selected.notes,
    )
    if inputs.selected.cells is not None and not inputs.selected.cells and inputs.selected.summary:
        # Nothing ran: the status says why ("no export-relevant changes"), not "no failing cells".
        report = replace(report, headline=inputs.selected.summary.splitlines()[0])
    proposal = _propose(report, head, skiplists, inputs.source, echo)
    report = report.with_proposal(proposal)
    patch = proposal.patch if proposal is not None else ""
    written, comment = _write(report, patch, outputs)
    broken = nothing_built((r.status, r.kind) for r in head.results.values())
    return ReportOutcome(report, comment, patch, written, broken, rerun_junit)


def _reconciled(head: ResultSet, inputs: ReportInputs) -> Reconciled | None:
    """The head held against its selection (none: a sweep): each selected cell the run runs must have a result."""
    selected = inputs.selected.cells
    if selected is None:
        return None
    if inputs.backends:
        selected = [cell for cell in selected if kept_by(cell, inputs.backends, SHAPES)]
    return reconcile(head, selected, inputs.selected.split)


def _read_inputs(inputs: ReportInputs, echo: Callable[[str], None]):
    """The head and base result sets, and main's history with a per-commit baseline; an empty selection
    needs no head, since no shard ran."""
    selected = inputs.selected.cells
    head_paths, expect = _paths(inputs.head, inputs.skip_missing), inputs.expect_shards
    if selected is not None and not selected:
        head_paths, expect = (), None
    elif not any(path.exists() for path in head_paths):
        missing = ", ".join(map(str, inputs.head)) or "none given"
        raise BotError(f"no head results ({missing}); pass the JUnit files `export-bot run` wrote with --head")
    head = read_junit(head_paths, expect_shards=expect or None)
    base, main = _read_base(inputs, echo)
    if base is not None and selected is not None:
        base = base.restricted_to(selected)  # main's sweep seen through this run's cells, the rest is not "not run"
    return head, base, main


def _read_base(inputs: ReportInputs, echo: Callable[[str], None]):
    """Main's per-commit baseline at the merge base when a base folder holds baseline.json, else its JUnit."""
    base_paths = _paths(inputs.base, inputs.skip_missing)
    state = baseline_file(base_paths)
    if state is None:
        if inputs.merge_base and base_paths:
            echo(f"--merge-base {inputs.merge_base[:12]}: the base holds JUnit only (no baseline.json): judged as is")
        return (read_junit(base_paths) if base_paths else None), None
    base, main = read_main_baseline(
        state, inputs.merge_base, now=created_now(), stale_days=inputs.stale_days, flaky_window=inputs.flaky_window
    )
    echo(f"base: {state}, each cell's newest result at or before the merge base {inputs.merge_base or '(none given)'}")
    return base, main


def _paths(paths: tuple[Path, ...], skip_missing: bool) -> tuple[Path, ...]:
    return tuple(p for p in paths if p.exists()) if skip_missing else paths


def _propose(report: Report, head, loaded: LoadedSkiplists, source: str | None, echo: Callable[[str], None]):
    """The proposal, in the scopes of the walk that judged: as the run recorded it, else as the module reads.

    None when neither can be had (the module's walk unreadable and nothing recorded). The report is
    still written: its verdict does not depend on the walk, only the proposal does.
    """
    try:
        walk = followed_walk(source, head.results.values(), where="")
    except BotError as exc:
        echo(f"no skiplist proposal: {exc}")
        return None
    return propose(report, head.results, loaded.with_walk(walk))


def _write(report: Report, patch: str, outputs: ReportOutputs) -> tuple[tuple[Path, ...], str]:
    """Render everything first, then write every file or none."""
    summary = render_summary(report)
    text = json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n"
    comment = render_comment(report)
    wanted = {outputs.report: text, outputs.comment: comment, outputs.summary: summary}
    if patch:
        wanted[outputs.patch] = patch
    texts = {path: content for path, content in wanted.items() if path is not None}
    appends = {outputs.append_summary: summary} if outputs.append_summary else {}
    write_files(texts, appends)
    return tuple(texts), comment


def created_now() -> str:
    """When the report was written (ISO 8601, UTC); SOURCE_DATE_EPOCH, when set, fixes it for reproducible output."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    moment = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    return moment.isoformat(timespec="seconds")


def repository_url() -> str | None:
    """The repository's web address in a workflow (`GITHUB_SERVER_URL`/`GITHUB_REPOSITORY`), for culprit links."""
    repository = os.environ.get("GITHUB_REPOSITORY")
    if not repository:
        return None
    return f"{os.environ.get('GITHUB_SERVER_URL') or 'https://github.com'}/{repository}"


def read_selected(path: Path | None) -> Selected:
    """The selection file's summary, cells and changed lines; `Selected()` (a sweep) without one."""
    if path is None:
        return Selected()
    cells, document = read_selection_document(path)
    summary = str(document.get("summary") or "") or None
    split = tuple(tuple(ids) for ids in document.get("shards", ()))  # checked by read_selection_document
    return Selected(summary, set(cells), changed_lines_of(document, path), comment_notes(document), split)
