"""The propose job, `export-bot propose`: a report and its probe history → the skiplist proposal, written if asked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.diff.model import load_report, write_report
from bot.diff.proposal import Proposal
from bot.errors import BotError
from bot.files import read_bytes
from bot.jobs.skiplist import followed_walk, recorded_results
from bot.propose.proposal import propose, results_from_report
from bot.propose.texts import write_texts
from bot.results import read_results
from bot.skiplist.model import read_skiplists


@dataclass(frozen=True)
class ProposeInputs:
    report: Path  # the report.json `export-bot diff` wrote; the newest probe run
    skiplists: Path  # the folder the proposal edits
    min_passes: int  # consecutive passing probe runs a removal needs when there is history
    history: tuple[Path, ...] = ()  # earlier probe runs, oldest first: report.json files or JUnit
    apply: bool = False  # write the proposed edits into the skiplist files
    write_report: bool = False  # store the proposal in the report's `proposal` slot
    source: str | None = None  # the model source: a checkout's own export tests walk their own scopes
    recorded_walk: tuple[Path, ...] = ()  # JUnit of the run: the walk its cells recorded is followed first


@dataclass(frozen=True)
class ProposeOutcome:
    proposal: Proposal
    written: tuple[Path, ...] = ()  # the skiplist files `apply` rewrote

    def notes(self) -> list[str]:
        """What the proposal does and cannot do, one line each, for stderr (the patch goes to stdout)."""
        lines = [] if self.proposal.patch else ["no skiplist change proposed"]
        for edit in self.proposal.entries:
            target = f" → {', '.join(edit.new_scopes)}" if edit.new_scopes else ""
            cells = f"{len(edit.evidence)} cell{'s' if len(edit.evidence) != 1 else ''}"
            lines.append(f"{edit.action}: {edit.model_class} in {edit.scope}{target} ({cells})")
        for cell in self.proposal.uncoverable:
            lines.append(
                f"uncoverable: {cell.cell}: `{cell.finest_scope}`, its narrowest scope, would also skip "
                f"{len(cell.would_skip)} passing or skipped cells; left for a maintainer"
            )
        lines.extend(f"wrote {path}" for path in self.written)
        return lines


def make_proposal(inputs: ProposeInputs) -> ProposeOutcome:
    """Propose skiplist edits for the report: entries for new failures, removals of skips the history shows obsolete."""
    report = load_report(inputs.report)
    history = [_read_history(path) for path in inputs.history if not _same_file(path, inputs.report)]
    recorded = recorded_results(inputs.recorded_walk) if inputs.recorded_walk else None
    # Refuses (exit 2) when neither a record nor the checkout's walk can be had.
    skiplists = read_skiplists(inputs.skiplists, followed_walk(inputs.source, recorded))
    proposal = propose(report, results_from_report(report), skiplists, history=history, min_passes=inputs.min_passes)
    written = write_texts(skiplists.folder, proposal.files) if inputs.apply else []
    if inputs.write_report:
        write_report(report.with_proposal(proposal), inputs.report)
    return ProposeOutcome(proposal, tuple(written))


def _read_history(path: Path):
    """A report.json's cell results, else JUnit's (a file or a folder of shards)."""
    if not path.exists():
        raise BotError(f"{path}: history file not found; pass earlier report.json or JUnit files")
    # read_bytes refuses a FIFO or a device before opening it: it would block the command.
    if not path.is_dir() and read_bytes(path)[:512].lstrip().startswith(b"{"):
        return results_from_report(load_report(path))
    results = read_results([path])
    if results.problems:
        raise BotError(f"{results.problems[0]} (history file {path})")
    return results.results


def _same_file(a: Path, b: Path) -> bool:
    return a.exists() and b.exists() and a.resolve() == b.resolve()
