"""The comment leads with what to do: causes on a line the PR changed come first, their proposed skips folded under them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.cells import BACKENDS
from bot.diff.groups import Group
from bot.diff.model import Report
from bot.diff.proposal import ADD, ProposedEdit

SCOPES_NAMED = 3  # scopes a fold's summary names; the rest are "…"


@dataclass(frozen=True)
class Folds:
    """The order of the causes and which proposed entries fold under which of them (docs/reports.md)."""

    groups: tuple[Group, ...] = ()  # the report's groups, those whose culprit line the PR changed first
    entries: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # position in `groups` → entry indices
    folded: frozenset[int] = frozenset()  # every entry index folded under a cause
    patch_under: int | None = None  # the one position whose fold holds every entry, and so the patch too


def fold_proposal(report: Report) -> Folds:
    """Causes the PR's own lines broke first; an added skip whose failing cells all belong to such causes
    folds under the first of them it covers: skipping is for a break that is intended, fixing comes first."""
    own = [group for group in report.groups if group.culprit is not None and group.culprit.changed]
    groups = tuple(own + [group for group in report.groups if group not in own])
    entries = report.proposal.entries if report.proposal is not None else ()
    under = _fold_under(entries, own)
    folded = frozenset(i for indices in under.values() for i in indices)
    alone = len(under) == 1 and len(folded) == len(entries) and not report.proposal.uncoverable
    return Folds(
        groups=groups,
        entries={position: tuple(indices) for position, indices in under.items()},
        folded=folded,
        patch_under=next(iter(under)) if alone else None,
    )


def _fold_under(entries: tuple[ProposedEdit, ...], own: list[Group]) -> dict[int, list[int]]:
    """Position in `own` → the indices of the added skips folded there: the first cause holding one of their cells."""
    own_cells = {cell for group in own for cell in group.cells}
    under: dict[int, list[int]] = {}
    for index, edit in enumerate(entries):
        if edit.action != ADD or not edit.evidence or not own_cells.issuperset(edit.evidence):
            continue
        evidence = set(edit.evidence)
        position = next(i for i, group in enumerate(own) if evidence.intersection(group.cells))
        under.setdefault(position, []).append(index)
    return under


def fold_summary(edits: tuple[ProposedEdit, ...], *, several: bool = False) -> str:
    """`if this break is intended: skip 12 classes in all`, as plain text (a `<summary>` shows no markdown)."""
    classes = {edit.model_class for edit in edits}
    scopes = list(dict.fromkeys(edit.scope for edit in edits))
    named = ", ".join(scopes[:SCOPES_NAMED]) + (", …" if len(scopes) > SCOPES_NAMED else "")
    count = f"{len(classes):,} {'class' if len(classes) == 1 else 'classes'}"
    return f"if {'these breaks are' if several else 'this break is'} intended: skip {count} in {named}"


def unseen_backends(report: Report) -> str | None:
    """`Computed from dynamo and onnx results; openvino and executorch were not run.` when some backend did not run."""
    seen = {key.partition("/")[0] for key in report.counts}
    ran = [backend for backend in BACKENDS if backend in seen]
    missing = [backend for backend in BACKENDS if backend not in seen]
    if not ran or not missing:
        return None
    verb = "was" if len(missing) == 1 else "were"
    return f"Computed from {_and(ran)} results; {_and(missing)} {verb} not run."


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
