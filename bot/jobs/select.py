"""The select job: changed files (or an `/export-check` request) → cells, reasons and the shard matrix."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

from bot.cells import SHAPES, kept_by
from bot.errors import BotError
from bot.files import append_text
from bot.jobs.inputs import read_durations
from bot.jobs.skiplist import walk_for_source
from bot.models.index import installed_index
from bot.run.shard import assign_shards, estimate, shard_count
from bot.select import select_cells, write_selection
from bot.select.base_settings import BaseSettings, read_base_settings
from bot.select.catalog import load_catalog
from bot.select.changes import changed_files, read_files, resolve
from bot.select.due import sweep_reasons
from bot.select.footprints import Recorded, recorded_footprints
from bot.select.request import parse_request, request_cells
from bot.select.selection import Sample
from bot.settings import Settings

log = logging.getLogger(__name__)


def select_job(
    repo: Path,
    base: str,
    head: str,
    settings: Settings | None = None,
    *,
    shards: int = 1,
    shard_minutes: float | None = None,
    durations: Path | None = None,
    request_json: str | None = None,
    json_out: Path | None = None,
    github_output: Path | None = None,
    pin_file: str | None = None,
    footprints: Path | None = None,
) -> dict:
    """The selection document `export-bot select` prints; the selection file and `$GITHUB_OUTPUT` lines are written too.

    On a push to main, `full_sweep_due` says why every cell must be re-measured: a shared path or
    a skiplist changed, a change's import graph reach was only sampled, or the caller workflow
    `pin_file` pins another export-bot (docs/workflows.md).

    `footprints`: main's baseline.json (or its folder); the cells it recorded running a changed file's
    changed functions are selected for that file (docs/selection.md, "Footprints"). None there (no
    baseline of main yet) or none recorded: the import graph decides, and the document says why.

    `settings` None: `[tool.export-bot]` at the base (a PR does not narrow its own gate); the
    document carries them for the later stages and lists the PR's own edits to apply after the merge.
    """
    request = parse_request(request_json)
    base_sha, head_sha = resolve(repo, base), resolve(repo, head)
    pinned = read_base_settings(repo, base_sha, head_sha) if settings is None else BaseSettings(settings, None, None)
    settings = pinned.settings
    recorded = recorded_footprints(footprints) if footprints else None
    if recorded and recorded.missing:
        log.warning("%s; selecting by the import graph", recorded.missing)
    cells, described, sample = _cells(request, repo, base_sha, head_sha, settings, recorded)
    unchanged = frozenset(described.get("unchanged_code", ()))  # comments or docstrings only: nothing to re-measure
    edited = [change.key for change in pinned.after_merge]
    due = (
        _sweep_due(repo, base_sha, head_sha, settings, pin_file, unchanged, sample, edited) if request.uses_git else ()
    )
    times = read_durations(durations) if durations else None
    # Sized by the selection's cost: a one-model PR gets one shard, `full` as many as its budget needs.
    count = shard_count(cells, times, cap=shards, budget_seconds=shard_minutes * 60 if shard_minutes else None)
    parts = assign_shards(cells, count, times) if cells else []
    document = {
        "base": base,
        "head": head,
        "base_sha": base_sha,
        "head_sha": head_sha,
        "probe": request.probe,
        **described,
        # `strategy.matrix: ${{ fromJSON(needs.select.outputs.matrix) }}`; an empty selection
        # has `shard: []` and the workflow skips the run jobs with `if: shard_count > 0`.
        "matrix": {"shard": list(range(1, len(parts) + 1))},
        "shard_count": len(parts),
        "shards": [[c.id for c in part] for part in parts],
        # On a push to main: why every cell must be re-measured (the workflow records it in the state).
        "full_sweep_due": list(due),
        # What judges this run, for every later stage, and the PR's own edits of it (docs/selection.md, "Settings").
        "settings": pinned.to_json(),
        "settings_after_merge": [change.to_json() for change in pinned.after_merge],
        # What main's footprints gave the selection, or why none (null: not asked for).
        "footprints": recorded.to_json() if recorded else None,
    }
    _write(document, cells, json_out, github_output)
    return document


def _walk(settings: Settings):
    """The scope walk a skiplist edit is mapped to cells by: the checkout's own, when it holds the export module.

    An entry under a scope only the checkout's walk knows (`onnx.generate.runtime`) would otherwise
    select no cell. A walk the bot cannot read falls back to its own, said in the log: a selection
    that refused would leave the PR without its required status.
    """
    try:
        return walk_for_source(settings.source)
    except BotError as exc:
        log.warning("%s; skiplist edits are mapped to cells by the bot's own scope walk", exc)
        return None


def _sweep_due(
    repo: Path,
    base_sha: str,
    head_sha: str,
    settings: Settings,
    pin_file: str | None,
    unchanged: frozenset[str],
    sample: Sample | None,
    settings_keys: list[str],
) -> tuple[str, ...]:
    paths = [p for change in changed_files(repo, base_sha, head_sha) for p in change.paths if p not in unchanged]
    pins = {}
    if pin_file and pin_file in paths:
        before, after = read_files(repo, base_sha, [pin_file]), read_files(repo, head_sha, [pin_file])
        pins[pin_file] = (before.get(pin_file), after.get(pin_file))
    return sweep_reasons(paths, settings, pins=pins, sample=sample, settings_keys=settings_keys)


def _cells(request, repo: Path, base_sha: str, head_sha: str, settings: Settings, recorded: Recorded | None):
    """The cells and how they were chosen: the git diff's rules, or the cells a request names."""
    if request.uses_git:
        walk = _walk(settings)
        selection = select_cells(
            repo, base_sha, head_sha, settings, walk=walk, seconds=estimate,
            footprints=recorded.cells if recorded else None, footprints_missing=recorded.missing if recorded else None,
        )  # fmt: skip
        if settings.backends:
            # The repository gates on some backends only ([tool.export-bot] backends).
            kept = tuple(c for c in selection.cells if kept_by(c, settings.backends, SHAPES))
            selection = dataclasses.replace(selection, cells=kept)
        return list(selection.cells), selection.to_json(), selection.sample
    cells = request_cells(request, load_catalog(settings), installed_index())
    described = {
        "summary": f"{len(cells)} cells named by `/export-check {request.kind}`",
        "request": request.kind,
        "cells": [c.id for c in cells],
    }
    return cells, described, None


def _write(document: dict, cells, json_out: Path | None, github_output: Path | None) -> None:
    if json_out:
        write_selection(json_out, cells, **{k: v for k, v in document.items() if k != "cells"})
    if github_output:
        append_text(
            github_output,
            f"matrix={json.dumps(document['matrix'])}\ncount={len(cells)}\nshards={document['shard_count']}\n"
            f"probe={'true' if document['probe'] else 'false'}\n"
            # One line each: a reason is a path or two hashes, never a newline.
            f"full={'true' if document['full_sweep_due'] else 'false'}\n"
            f"due={'; '.join(document['full_sweep_due'])}\n",
        )
