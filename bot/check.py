"""The main job end to end, as one function: select → run → results → diff → re-run → report → propose."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from bot.cells import Cell
from bot.diff.model import Report
from bot.errors import EXIT_FAILURE, BotError
from bot.settings import Settings


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


@dataclass(frozen=True)
class CheckOutcome:
    report: Report
    comment: str
    patch: str
    report_path: Path
    written: tuple[Path, ...]
    nothing_built: bool = False  # every attempted cell was a build error: a broken setup, exit 2


def run_check(options: CheckOptions, echo: Callable[[str], None]) -> CheckOutcome:
    """Run the check and write its files into `options.out`; `echo` receives the progress notes."""
    from bot.diff import diff
    from bot.diff.model import write_report
    from bot.files import write_text
    from bot.propose.proposal import propose
    from bot.propose.texts import parse_texts, read_texts
    from bot.report import render_comment, render_summary
    from bot.results import read_results

    out = options.out
    out.mkdir(parents=True, exist_ok=True)
    plan, changed_lines = _plan(options, out, echo)
    # Read once: the diff judges with these skiplists and the proposal edits these texts.
    texts = read_texts(options.skiplists)
    skiplists = parse_texts(texts, options.skiplists)
    head_junit = out / "junit.xml"
    echo(f"running {len(plan.cells)} cells from {plan.source} → {head_junit}")
    _run(plan, head_junit, options.workers)

    head = read_results([head_junit])
    # Main's baseline is a full sweep: seen through this run's cells, so the rest is not "not run".
    base = read_results(list(options.base_junit)).restricted_to(plan.cells) if options.base_junit else None
    report = diff(base, head, skiplists, changed_lines=changed_lines)
    rerun_junit = None
    if report.needs_rerun:
        # docs/diff.md: a newly broken cell is re-run once before it is reported; disagreement is flaky.
        rerun_junit = out / "rerun.xml"
        cells = tuple(Cell.parse(cell_id) for cell_id in report.needs_rerun)
        echo(f"re-running {len(cells)} newly broken cells once to confirm them → {rerun_junit}")
        _run(replace(plan, cells=cells, shard=None), rerun_junit, options.workers)
        report = diff(base, head, skiplists, read_results([rerun_junit]), changed_lines=changed_lines)

    proposal = propose(report, head.results, skiplists, texts, folder=options.skiplists.name)
    report = report.with_proposal(proposal)
    comment = render_comment(report)
    written = [out / "report.json", out / "comment.md", out / "summary.md", head_junit]
    write_report(report, written[0])
    write_text(written[1], comment)
    write_text(written[2], render_summary(report))
    if proposal.patch:
        written.append(out / "skiplists.patch")
        write_text(written[-1], proposal.patch)
    if rerun_junit:
        written.append(rerun_junit)
    from bot.setup_problems import nothing_built

    broken = nothing_built((r.status, r.kind) for r in head.results.values())
    return CheckOutcome(report, comment, proposal.patch, written[0], tuple(written), broken)


def _plan(options: CheckOptions, out: Path, echo: Callable[[str], None]):
    """The run plan, and the PR's changed lines when the cells come from a git diff (else None)."""
    from bot.run.planning import build_plan

    named = changed_lines = None
    if options.base_ref:
        from bot.select import select_cells, write_selection

        selection = select_cells(options.repo, options.base_ref, options.head_ref, options.settings)
        echo(selection.summary)
        write_selection(out / "selection.json", selection.cells)
        named, changed_lines = list(selection.cells), selection.changed_lines
    plan = build_plan(
        models=options.models,
        preset=None if named is not None else options.preset,
        named=named,
        backends=options.backends,
        shapes=options.shapes,
        generate=options.generate,
        probe=options.probe,
        source=options.source,
        skiplists=options.skiplists,
        cell_timeout=options.cell_timeout,
        settings=options.settings,
    )
    return plan, changed_lines


class CheckError(BotError, RuntimeError):
    """The check could not finish (a run that did not complete); the message says where to look."""

    exit_code = EXIT_FAILURE  # the run failed, not the user's input


def _run(plan, junit: Path, workers: int | str) -> None:
    from bot.files import make_parent
    from bot.run.session import COMPLETED, SessionOptions, run_session

    make_parent(junit)  # the log and the JUnit go beside each other, in a folder that may not exist yet
    # pytest's own output (dots, timeout stack dumps) goes to a log beside the JUnit: stdout
    # carries the comment, so that `export-bot check > comment.md` is the comment alone.
    log = junit.with_name(junit.stem + ".pytest.log")
    code = run_session(plan, SessionOptions(junit=junit, workers=workers, log=log))
    if code not in COMPLETED or not junit.exists():
        raise CheckError(f"the run did not complete (pytest exit status {code}); see the output above")
