"""The run job: options → a checked plan → one pytest session → JUnit; `run` and `check` (and its re-run) share it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.diff.model import load_report
from bot.errors import EXIT_FAILURE, BotError
from bot.files import make_parent, write_text
from bot.jobs.inputs import read_durations
from bot.models.sources import get_source
from bot.results import read_results
from bot.run import session
from bot.run.plan import RunPlan
from bot.run.planning import build_plan
from bot.run.selection import split_names
from bot.select.selection_file import read_selection
from bot.settings import Settings
from bot.setup_problems import headline, nothing_built, setup_causes
from bot.skiplist.model import LoadedSkiplists, read_skiplists

# A valid JUnit of no cells: an empty shard, or a report with nothing left to confirm.
EMPTY_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="export-bot" '
    'tests="0" errors="0" failures="0" skipped="0"/></testsuites>\n'
)


class RunIncomplete(BotError, RuntimeError):
    """The pytest session did not complete; its JUnit may be partial. Not the user's input: exit 1."""

    exit_code = EXIT_FAILURE


def run_plan(plan: RunPlan, junit: Path, workers: int | str) -> None:
    """Run the plan's cells into `junit`; a plan with no cells writes an empty JUnit without a pytest session.

    pytest's own output (dots, stack dumps of timed-out cells) goes to a log beside the JUnit:
    stdout carries the comment, so that `export-bot check > comment.md` is the comment alone.
    """
    if not plan.cells:
        write_text(junit, EMPTY_JUNIT)  # no session: it would import torch and every backend for nothing
        return
    make_parent(junit)  # the log and the JUnit go beside each other, in a folder that may not exist yet
    log = junit.with_name(junit.stem + ".pytest.log")
    code = session.run_session(plan, session.SessionOptions(junit=junit, workers=workers, log=log))
    if code not in session.COMPLETED or not junit.exists():
        raise RunIncomplete(f"the run did not complete (pytest exit status {code}); {junit} may be partial")


def refuse_when_nothing_built(junit: Path) -> None:
    """Exit 2 when every attempted cell failed to build: a broken setup, not a result to diff."""
    results = read_results([junit]).results.values()
    if not nothing_built((r.status, r.kind) for r in results):
        return
    causes = setup_causes((dict(r.properties), r.message) for r in results)
    why = headline(causes) if causes else "every cell is a build error or not buildable (see its message in the JUnit)"
    raise BotError(f"{junit}: nothing could be built; {why}. Fix the checkout's test setup, then run again")


def rerunner(plan: RunPlan, workers: int | str) -> Callable[[tuple[Cell, ...], Path], None]:
    """The confirming re-run of the report job: `cells` under `plan`'s source, skiplists and timeout, unsharded."""

    def rerun(cells: tuple[Cell, ...], junit: Path) -> None:
        run_plan(replace(plan, cells=cells, shard=None), junit, workers)

    return rerun


def named_rerunner(
    skiplists: LoadedSkiplists, settings: Settings, workers: int | str
) -> Callable[[tuple[Cell, ...], Path], None]:
    """The confirming re-run of `report`, planned only when needed from the settings' source, under its skiplists."""

    def rerun(cells: tuple[Cell, ...], junit: Path) -> None:
        plan = build_plan(named=cells, skiplists=skiplists, settings=settings)
        run_plan(plan, junit, workers)

    return rerun


@dataclass(frozen=True)
class NamedCells:
    """Where the cells come from when the options name them: `--cells`, `--selection` or `--rerun-of`."""

    cell_ids: tuple[str, ...] = ()
    selection_file: Path | None = None
    rerun_of: Path | None = None


def plan_from_options(*, settings: Settings, skiplists: Path, named: NamedCells = NamedCells(), **options) -> RunPlan:
    """The plan `run` executes: the skiplists read once, the named cells read and checked, then `build_plan`."""
    durations_file = options.pop("durations_file", None)
    if durations_file:
        options["durations"] = read_durations(durations_file)
    exact = _parse_cell_ids(named, options) if named.cell_ids else None
    cells = exact
    if cells is None and (named.selection_file or named.rerun_of):
        cells = _named_cells(named.selection_file, named.rerun_of)
    plan = build_plan(named=cells, skiplists=read_skiplists(skiplists), settings=settings, **options)
    if exact is not None:
        _check_exact(exact, plan, shard=options.get("shard"))
    return plan


def _check_exact(exact: Sequence[Cell], plan: RunPlan, shard: str | None) -> None:
    """`--cells` runs what it names: a cell the source lacks or the options leave out is an error, not a skip."""
    known = {info.model_class for info in get_source(plan.source).classes()}
    unknown = next((cell for cell in exact if cell.model_class not in known), None)
    if unknown is not None:
        raise BotError(
            f"--cells {unknown.id}: the model source {plan.source} has no class {unknown.model_class}; "
            "check the spelling, or pass --source transformers-tests:PATH for a class only the tests build"
        )
    if shard:
        return
    kept = set(plan.cells)
    dropped = [cell.id for cell in exact if cell not in kept]
    if dropped:
        raise BotError(
            f"--cells {dropped[0]}: left out by --backends, --shapes, --no-generate or [tool.export-bot] "
            "backends; --cells already names exactly the cells to run"
        )


def _parse_cell_ids(named: NamedCells, options) -> list[Cell]:
    """The cells `--cells` names, in the order given, each id checked by the cell grammar (docs/cells.md)."""
    if named.selection_file or named.rerun_of:
        raise BotError("--cells, --selection and --rerun-of each name the cells to run; give only one")
    if options.get("models") or options.get("preset"):
        raise BotError("--cells names the cells to run; leave out --models and --preset")
    cells = []
    for cell_id in split_names(named.cell_ids):
        try:
            cells.append(Cell.parse(cell_id))
        except CellIdError as exc:
            raise BotError(f"--cells: {exc}") from None
    if not cells:
        raise BotError("--cells: give at least one cell id, such as `BertModel::test_onnx_export_static`")
    return cells


def _named_cells(selection_file: Path | None, rerun_of: Path | None) -> list[Cell]:
    """The cells a selection file lists, or those a report says still need their confirming re-run."""
    if rerun_of:
        return [Cell.parse(cell_id, lenient=True) for cell_id in load_report(rerun_of).needs_rerun]
    return read_selection(selection_file)
