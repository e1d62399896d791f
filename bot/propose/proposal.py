"""The proposal: edits from a report's results (and probe history), the skiplist texts they produce, the patch.

The same concept as bot/diff/proposal.py, seen from the propose stage: this module computes the
proposal, that one is its type inside report.json.

Pure: the command's loaded skiplists in (texts `{file name: text}` and their walk, bot/skiplist/model.py),
new texts and a patch out. Reading and writing the files is the caller's edge.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from bot.cells import Cell, CellIdError
from bot.diff.model import Report
from bot.diff.proposal import ADD, NARROW, REMOVE, Proposal, ProposedEdit
from bot.errors import BotError
from bot.outcomes import CellResult, Status
from bot.propose.additions import addition_edits
from bot.propose.obsolete import SweepResults, obsolete_edits
from bot.propose.texts import Texts
from bot.scopes import ScopeWalk, describe_walk
from bot.skiplist.document import SkiplistDocument
from bot.skiplist.model import LoadedSkiplists

log = logging.getLogger(__name__)


def propose(
    report: Report,
    head: SweepResults,
    loaded: LoadedSkiplists,
    *,
    history: Sequence[SweepResults] = (),
    min_passes: int = 3,
) -> Proposal:
    """Edits for the report's uncovered new failures and for skips its probes (and `history`) show obsolete.

    `head` holds the report's cell results: the reader's, or `results_from_report` for a report
    read back from report.json. `loaded` are the skiplists the caller read once (and judged the
    diff with): their texts are edited, in the scopes of their walk, and the patch's paths name
    their folder. `history` holds earlier probe runs, oldest first; the head is the newest. A
    single run (no history) decides alone, as on a PR's `/export-check probe`. With history, an
    entry is removed only when its cells passed in `min_passes` consecutive runs (docs/proposals.md, for main).
    """
    # A cell whose test module did not import says nothing about its export: a setup problem to
    # fix in the checkout, never a skip (docs/proposals.md).
    failures = [
        Cell.parse(line.cell, lenient=True)
        for name in ("newly_broken", "new_failing")
        for line in report.category(name)
        if not line.setup_module
    ]
    causes = {cell_id: group for group in report.groups for cell_id in group.cells}
    skiplists = loaded.skiplists
    added, uncoverable = addition_edits(head, failures, skiplists, causes)
    runs = [*history, head]
    k = max(1, min_passes) if history else 1
    obsolete = list(obsolete_edits(skiplists.skips, runs, k, skiplists.walk))
    edits = tuple(obsolete + added)
    files = render(edits, loaded.texts, skiplists.walk)
    return Proposal(
        entries=edits,
        patch=unified_patch(files, loaded.folder.name),
        files={name: new for name, (old, new) in files.items()},
        uncoverable=tuple(uncoverable),
        min_passes=k,
        runs=len(runs),
        walk=describe_walk(skiplists.walk),
    )


def results_from_report(report: Report) -> dict[Cell, CellResult]:
    """The cell results a report carries, for a proposal made from report.json alone.

    The one conversion at the JSON edge (`export-bot propose`, the probe history, the
    obsolete-skip job): a report line keeps what a proposal reads (status, stage, kind, the
    message's first line, scopes, probe), not tracebacks. A job that still holds the reader's
    results passes those instead.
    """
    results = {}
    for line in report.cells:
        try:
            cell = Cell.parse(line.cell, lenient=True)
            status = Status(line.status)
        except (CellIdError, ValueError):
            log.warning("report line %r is not a cell result; left out", line.cell)
            continue
        results[cell] = CellResult(
            cell,
            status,
            stage=line.stage,
            kind=line.kind,
            message=line.message,
            skip_scope=line.skip_scope,
            exactness_scope=line.exactness_scope,
            probe=line.probe,
        )
    return results


def render(edits: Sequence[ProposedEdit], texts: Texts, walk: ScopeWalk | None = None) -> dict[str, tuple[str, str]]:
    """File name → (old text, new text) for every file the edits change, via the style-preserving editor;
    a new scope table goes where it falls in `walk` (None: the bot's own)."""
    documents: dict[str, tuple[str, SkiplistDocument]] = {}
    for run in _runs(edits):
        file = run[0].file
        if file not in documents:
            old = texts.get(file, "")
            documents[file] = (old, SkiplistDocument.parse(old, file, walk))
        if run[0].action == ADD:
            # One re-read for a run of additions: each edit re-reading the file made a proposal of
            # thousands of cells quadratic (a full sweep's JUnit took minutes).
            documents[file][1].add_many([(e.scope, e.model_class, e.reason or "") for e in run])
        else:
            for edit in run:
                _apply(documents[file][1], edit)
    return {name: (old, document.text()) for name, (old, document) in documents.items() if document.text() != old}


def _runs(edits: Sequence[ProposedEdit]) -> list[list[ProposedEdit]]:
    """The edits in order, cut into runs of one file and, for additions, one action (applied as a batch)."""
    runs: list[list[ProposedEdit]] = []
    for edit in edits:
        last = runs[-1][-1] if runs else None
        if last is not None and last.file == edit.file and last.action == edit.action == ADD:
            runs[-1].append(edit)
        else:
            runs.append([edit])
    return runs


def apply_edits(edits: Sequence[ProposedEdit], texts: Texts) -> dict[str, str]:
    """The texts of the files the edits change, edited by our own editor: file name → new text."""
    return {name: new for name, (_, new) in render(edits, texts).items()}


def _apply(document: SkiplistDocument, edit: ProposedEdit) -> None:
    listed = document.scopes()
    present = edit.model_class in listed.get(edit.scope, {})
    if edit.action == ADD:
        if not present:
            document.add(edit.scope, edit.model_class, edit.reason or "")
    elif edit.action == REMOVE:
        if present:
            document.remove(edit.scope, edit.model_class)
    elif edit.action == NARROW:
        if present:
            document.narrow(edit.scope, edit.model_class, list(edit.new_scopes))
    else:
        # `Proposal.from_json` admits only known actions; this guards edits built in code.
        raise ProposalError(f"unknown proposal action {edit.action!r} (expected add, remove or narrow)")


class ProposalError(BotError, ValueError):
    """A proposal the editor cannot apply; the message says which entry."""


def unified_patch(files: Mapping[str, tuple[str, str]], folder: str = "skiplists") -> str:
    """One unified diff over the changed files, with git's `a/` and `b/` prefixes."""
    folder = PurePosixPath(folder).name or "skiplists"  # the folder's own name, as `git diff` in it shows
    chunks = []
    for name in sorted(files):
        old, new = files[name]
        lines = difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{folder}/{name}",
            tofile=f"b/{folder}/{name}",
        )
        for line in lines:
            chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)
