"""The check job, `export-bot check`: select → run → the report job, as the PR workflow does, in one process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from bot.files import check_inputs
from bot.jobs.report import ReportInputs, ReportOutcome, ReportOutputs, Selected, make_report
from bot.jobs.run import rerunner, run_plan
from bot.run.plan import RunPlan
from bot.run.planning import build_plan
from bot.run.shard import estimate
from bot.select import select_cells, write_selection
from bot.select.base_settings import read_base_settings
from bot.select.changes import resolve
from bot.settings import Settings, load_settings
from bot.skiplist.model import LoadedSkiplists, read_skiplists


@dataclass(frozen=True)
class CheckOptions:
    models: tuple[str, ...] = ()
    preset: str | None = "smoke"
    base_ref: str | None = None  # select from the git diff base...head instead of a preset
    head_ref: str = "HEAD"
    repo: Path = Path(".")
    base_junit: tuple[Path, ...] = ()
    backends: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    generate: bool = True
    probe: bool = False
    workers: int | str = 2
    source: str | None = None
    skiplists: Path = Path("skiplists")
    cell_timeout: float | None = None
    out: Path = Path("export-bot-out")
    settings: Settings = Settings()  # read once by the caller (the --repo pyproject) and used for every step


def run_check(options: CheckOptions, echo: Callable[[str], None]) -> ReportOutcome:
    """Run the check and write its files into `options.out`; `echo` receives the progress notes."""
    check_inputs(options.base_junit)
    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    skiplists = read_skiplists(options.skiplists)  # once: planning, the diff and the proposal share them
    plan, selected = plan_check(options, skiplists, out, echo)
    head_junit = out / "junit.xml"
    echo(f"running {len(plan.cells)} cells from {plan.source} → {head_junit}")
    run_plan(plan, head_junit, options.workers)
    inputs = ReportInputs.under(
        options.settings, head=(head_junit,), base=options.base_junit, selected=selected, source=plan.source
    )
    outcome = make_report(
        inputs, ReportOutputs.in_folder(out), skiplists, rerun=rerunner(plan, options.workers), echo=echo
    )
    extra = (head_junit,) + ((outcome.rerun_junit,) if outcome.rerun_junit else ())
    return replace(outcome, written=outcome.written + extra)


def check_settings(repo: Path, config: Path | None, base_ref: str | None, head_ref: str) -> Settings:
    """`--config`'s settings, else with `--base` the base's pyproject, as a pull request is judged
    (docs/selection.md, Settings), else the `--repo` pyproject's."""
    if config or not base_ref:
        return load_settings(config or repo / "pyproject.toml")
    return read_base_settings(repo, resolve(repo, base_ref), resolve(repo, head_ref)).settings


def plan_check(
    options: CheckOptions, skiplists: LoadedSkiplists, out: Path, echo: Callable[[str], None]
) -> tuple[RunPlan, Selected]:
    """The run plan, and what selected its cells: the git diff's summary and changed lines with --base."""
    named = summary = changed_lines = None
    if options.base_ref:
        selection = select_cells(options.repo, options.base_ref, options.head_ref, options.settings, seconds=estimate)
        echo(selection.summary)
        write_selection(out / "selection.json", selection.cells)
        named, summary, changed_lines = list(selection.cells), selection.summary, selection.changed_lines
    plan = build_plan(
        models=options.models,
        preset=None if named is not None else options.preset,
        named=named,
        backends=options.backends,
        shapes=options.shapes,
        generate=options.generate,
        probe=options.probe,
        source=options.source,
        skiplists=skiplists,
        cell_timeout=options.cell_timeout,
        settings=options.settings,
    )
    # Main's baseline is a full sweep: seen through this run's cells, so the rest is not "not run".
    return plan, Selected(summary or None, set(plan.cells), changed_lines)
