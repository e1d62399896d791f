"""Selection end to end for a repository: read git at both refs (the edges), then decide with the pure rules."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path

from bot.cells import Cell
from bot.scopes import ScopeWalk
from bot.select import changes as git
from bot.select.catalog import Catalog, load_catalog
from bot.select.code_change import same_code
from bot.select.footprints import observed_impact, unavailable_note
from bot.select.imports import ImportGraph, graph_paths, read_graph
from bot.select.rules import classify, decide, model_type_of
from bot.select.selection import Selection
from bot.select.skiplist_changes import EntryChange, entry_changes
from bot.select.tree import MODELS_DIR, ModelTree, read_tree
from bot.settings import Settings
from bot.skiplist.model import SkiplistError

log = logging.getLogger(__name__)


def tree_at(repo: Path | str, ref: str, models_dir: str = MODELS_DIR) -> ModelTree:
    return read_tree(
        partial(git.list_files, repo, ref), partial(git.grep, repo, ref), partial(git.read_files, repo, ref), models_dir
    )


def graph_at(repo: Path | str, ref: str) -> ImportGraph:
    """The import graph of the checkout at `ref` (src and tests): one `git ls-tree`, one `git cat-file --batch`."""
    started = time.monotonic()
    graph = read_graph(partial(git.list_blobs, repo, ref), partial(git.read_blobs, repo))
    log.info("import graph at %s: %d files in %.1f s", ref, len(graph.imports), time.monotonic() - started)
    return graph


def select_cells(
    repo: Path | str,
    base: str,
    head: str,
    settings: Settings | None = None,
    catalog: Catalog | None = None,
    models_dir: str = MODELS_DIR,
    walk: ScopeWalk | None = None,
    *,
    footprints: Mapping[str, Iterable[str]] | None = None,
    footprints_missing: str | None = None,
    seconds: Callable[[Cell], float] | None = None,
) -> Selection:
    """The cells a pull request from `base` to `head` must run, with the reason for each model class.

    `walk` maps a changed skiplist entry to cells: the checkout's own scope walk, None for the bot's.
    `footprints`: cell id → the checkout functions it executed on main's sweeps (docs/selection.md,
    "Footprints"); a changed file some cell executed selects the cells that ran its changed lines, the
    import graph decides the rest; `footprints_missing` says why there are none (no baseline of main
    yet), noted when a changed file they would have decided is there. `seconds` is rules.decide's: a
    cell's CPU seconds, for the sample.
    """
    settings = settings or Settings()
    catalog = catalog or load_catalog(settings)
    changed, unchanged = _code_changes(repo, base, head, git.changed_files(repo, base, head))
    log.info("%d changed files between %s and %s", len(changed), base, head)
    kinds = {p: classify(p, settings, models_dir) for c in changed for p in c.paths}

    # The head tree names classes and importers; the base tree is read only to tell a removed
    # type from a folder that never had a modeling module (it costs as much as the head one).
    head_tree = tree_at(repo, head, models_dir)
    touched = {model_type_of(p, models_dir) for p, k in kinds.items() if k == "model"}
    gone = touched - head_tree.types
    base_tree = tree_at(repo, base, models_dir) if gone else ModelTree({})

    entries, notes = _skiplist_changes(repo, base, head, changed, kinds)
    asked = {p for p, k in kinds.items() if k in ("other", "shared")}  # the files main's footprints decide
    undecided = graph_paths(asked) if footprints_missing else ()  # Python of src/ or tests/: not a docs change
    if undecided:
        notes.append(unavailable_note(footprints_missing, len(undecided)))
    observed = _observed(repo, base, head, footprints, asked)
    # The import graph is read only for a Python file of src/ or tests/ outside a model folder no footprint decides.
    graphed = graph_paths(p for p, k in kinds.items() if k == "other" and p not in (observed or {}))
    graph = graph_at(repo, head) if graphed else None
    rules = {"graph": graph, "observed": observed, "seconds": seconds}
    selection = decide(changed, head_tree, base_tree, settings, catalog, entries, notes, models_dir, walk, **rules)
    hunks = git.changed_lines(repo, base, head)
    changed_lines = {path: tuple(ranges) for path, ranges in hunks.items()}
    return replace(selection, changed_lines=changed_lines, unchanged_code=unchanged)


def _observed(repo, base, head, footprints, paths: set[str]) -> dict[str, dict[str, str]] | None:
    """Changed path → {cell id: what it executed of the change}, for the `paths` some recorded cell executed.

    The footprints were recorded on main's code, so the change is read on the merge base's side and
    mapped to the functions holding it there (bot/select/footprints.py).
    """
    if not footprints or not paths:
        return None
    ran = {name.partition("::")[0] for names in footprints.values() for name in names}
    lines = {p: r for p, r in git.changed_base_lines(repo, base, head).items() if p in paths and p in ran}
    if not lines:
        return None
    texts = git.read_files(repo, git.merge_base(repo, base, head), list(lines))
    return observed_impact(footprints, texts, lines)


def _code_changes(repo, base, head, changed: list[git.Change]) -> tuple[list[git.Change], tuple[str, ...]]:
    """The changes minus the edited .py files whose code is the same (bot/select/code_change.py), and those files."""
    edited = [c.path for c in changed if c.status == "M" and c.path.endswith(".py")]
    if not edited:
        return changed, ()
    before = git.read_files(repo, git.merge_base(repo, base, head), edited)
    after = git.read_files(repo, head, edited)
    same = {p for p in edited if p in before and p in after and same_code(before[p], after[p])}
    return [c for c in changed if c.path not in same], tuple(sorted(same))


def _skiplist_changes(repo, base, head, changed, kinds) -> tuple[list[EntryChange], list[str]]:
    """Entry changes of every skiplist file the diff touches, old path at base and new path at head."""
    entries, notes = [], []
    for change in changed:
        if not any(kinds[p] == "skiplist" for p in change.paths):
            continue
        old = change.old_path or change.path
        base_text = git.read_files(repo, base, [old]).get(old) if change.status != "A" else None
        head_text = git.read_files(repo, head, [change.path]).get(change.path) if change.status != "D" else None
        try:
            entries += entry_changes(change.path, base_text, head_text)
        except SkiplistError as exc:
            # The lint job reports the syntax error with its line; selection says it could not compare.
            notes.append(f"skiplist not compared: {exc}")
    return entries, notes
