"""The proposal: edits from a report (and probe history), the skiplist files they produce, the patch, apply."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.cells import Cell, CellIdError
from bot.diff.model import Report
from bot.outcomes import CellResult, Status
from bot.propose.additions import Uncoverable, addition_edits
from bot.propose.edit import ADD, NARROW, REMOVE, ProposedEdit
from bot.propose.obsolete import Run, obsolete_edits
from bot.skiplist.document import SkiplistDocument
from bot.skiplist.model import load_skiplists

log = logging.getLogger(__name__)

History = Report | Run


@dataclass(frozen=True)
class Proposal:
    """What the bot suggests changing in the skiplists, and the evidence for each change."""

    entries: tuple[ProposedEdit, ...] = ()
    patch: str = ""  # unified diff, `a/skiplists/…` → `b/skiplists/…`
    files: Mapping[str, str] = field(default_factory=dict)  # changed file name → its new text
    # The texts `files` were computed from: when the disk still holds them, apply writes `files`
    # as they are instead of redoing every edit (each edit re-validates the whole file).
    bases: Mapping[str, str] = field(default_factory=dict, repr=False)
    uncoverable: tuple[Uncoverable, ...] = ()
    min_passes: int = 1  # consecutive passing probes a removal needed
    runs: int = 1  # probe runs consulted

    @property
    def empty(self) -> bool:
        return not self.entries

    def to_json(self) -> dict:
        """The `proposal` slot of report.json. The full file texts stay out: the patch says it all."""
        return {
            "entries": [edit.to_json() for edit in self.entries],
            "patch": self.patch,
            "uncoverable": [u.to_json() for u in self.uncoverable],
            "min_passes": self.min_passes,
            "runs": self.runs,
        }

    @classmethod
    def from_json(cls, data: Mapping) -> Proposal:
        return cls(
            entries=tuple(ProposedEdit.from_json(e) for e in data.get("entries", ())),
            patch=data.get("patch", ""),
            uncoverable=tuple(Uncoverable.from_json(u) for u in data.get("uncoverable", ())),
            min_passes=int(data.get("min_passes", 1)),
            runs=int(data.get("runs", 1)),
        )


def propose(report: Report, skiplists_dir: Path, *, history: Sequence[History] = (), min_passes: int = 3) -> Proposal:
    """Edits for the report's uncovered new failures and for skips its probes (and `history`) show obsolete.

    `history` holds earlier probe runs, oldest first; the report is the newest. A single run
    (no history) decides alone, as on a PR's `/export-check probe`. With history, an entry is
    removed only when its cells passed in `min_passes` consecutive runs (docs/proposals.md, for main).
    """
    skiplists_dir = Path(skiplists_dir)
    skiplists = load_skiplists(skiplists_dir)
    head = results_of(report)
    # A cell whose test module did not import says nothing about its export: a setup problem to
    # fix in the checkout, never a skip (docs/proposals.md).
    failures = [
        Cell.parse(line.cell)
        for name in ("newly_broken", "new_failing")
        for line in report.category(name)
        if not line.setup_module
    ]
    causes = {cell_id: group for group in report.groups for cell_id in group.cells}
    added, uncoverable = addition_edits(head, failures, skiplists, causes)
    runs = [results_of(item) for item in history] + [head]
    k = max(1, min_passes) if history else 1
    obsolete = list(obsolete_edits(skiplists.skips, runs, k))
    edits = tuple(obsolete + added)
    files = render(edits, skiplists_dir)
    return Proposal(
        entries=edits,
        patch=unified_patch(files, skiplists_dir),
        files={name: new for name, (old, new) in files.items()},
        bases={name: old for name, (old, new) in files.items()},
        uncoverable=tuple(uncoverable),
        min_passes=k,
        runs=len(runs),
    )


def results_of(item: History) -> Run:
    """Cell results from a report (object or its JSON) or a reader's mapping, passed through."""
    if isinstance(item, Mapping) and "schema" in item:
        item = Report.from_json(item)
    if not isinstance(item, Report):
        return item
    results = {}
    for line in item.cells:
        try:
            cell = Cell.parse(line.cell)
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


def render(edits: Sequence[ProposedEdit], skiplists_dir: Path) -> dict[str, tuple[str, str]]:
    """File name → (old text, new text) for every file the edits change, via the style-preserving editor."""
    documents = _edited(edits, skiplists_dir)
    out = {}
    for name, (old, document) in documents.items():
        if document.text() != old:
            out[name] = (old, document.text())
    return out


def apply_proposal(proposal: Proposal, skiplists_dir: Path) -> list[Path]:
    """Write the proposal's edits into the skiplist files (atomically, through the editor); the files changed."""
    skiplists_dir = Path(skiplists_dir)
    written = []
    names = {edit.file for edit in proposal.entries}
    if (
        names
        and names <= set(proposal.files)
        and all(_read(skiplists_dir / name) == proposal.bases.get(name) for name in names)
    ):
        for name in sorted(names):
            path = skiplists_dir / name
            SkiplistDocument.parse(proposal.files[name], str(path)).save(path)
            written.append(path)
        return written
    for name, (old, document) in _edited(proposal.entries, skiplists_dir).items():
        if document.text() != old:
            path = skiplists_dir / name
            document.save(path)
            written.append(path)
    return written


def _read(path: Path) -> str | None:
    # Bytes, as the editor reads them: CRLF files must compare as they are on disk.
    return path.read_bytes().decode("utf-8") if path.exists() else None


def _edited(edits: Sequence[ProposedEdit], skiplists_dir: Path) -> dict[str, tuple[str, SkiplistDocument]]:
    documents: dict[str, tuple[str, SkiplistDocument]] = {}
    for edit in edits:
        if edit.file not in documents:
            path = skiplists_dir / edit.file
            old = _read(path) or ""
            documents[edit.file] = (old, SkiplistDocument.parse(old, edit.file))
        _apply(documents[edit.file][1], edit)
    return documents


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
        raise ValueError(f"unknown proposal action {edit.action!r} (expected add, remove or narrow)")


def unified_patch(files: Mapping[str, tuple[str, str]], skiplists_dir: Path) -> str:
    """One unified diff over the changed files, with git's `a/` and `b/` prefixes."""
    folder = Path(skiplists_dir).name or "skiplists"
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
