"""`export-bot select`: changed files between two refs → cells, reasons and a shard matrix, as JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from bot.cli.common import handle_errors


@click.command()
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The Transformers-layout git repository.",
)
@click.option("--base", required=True, help="The ref the pull request merges into (e.g. origin/main).")
@click.option("--head", required=True, help="The pull request's head ref or SHA.")
@click.option(
    "--shards",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Split the cells into N shards for the GitHub Actions job matrix.",
)
@click.option(
    "--durations",
    type=click.Path(exists=True, path_type=Path),
    envvar="EXPORT_BOT_DURATIONS",
    default=None,
    help="An earlier run's JUnit (a file, or a folder of shard files) whose testcase times balance the shards "
    "(default: EXPORT_BOT_DURATIONS; cells it lacks cost their recorded time).",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="pyproject.toml holding [tool.export-bot] (default: REPO/pyproject.toml).",
)
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the selection here: the file `export-bot run --selection FILE --shard I/N` reads.",
)
@click.option(
    "--request",
    "request_json",
    default=None,
    help="A parsed `/export-check` request (JSON from `export-bot github command`): named models, "
    "`full` or `probe` instead of, or on top of, the git selection.",
)
@click.option(
    "--github-output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append `matrix=`, `count=` and `probe=` lines here ($GITHUB_OUTPUT) for the shard jobs.",
)
@handle_errors
def select(
    repo: Path,
    base: str,
    head: str,
    shards: int,
    durations: Path | None,
    config: Path | None,
    json_out: Path | None,
    request_json: str | None,
    github_output: Path | None,
) -> None:
    """Print the cells a pull request must run, why, and the shard matrix, as JSON.

    Every shard job gets the same selection file and runs `export-bot run --selection FILE
    --shard I/N [--durations FILE]`; sharding is deterministic, so shard I there holds exactly
    the cells listed under `shards[I-1]` here.
    """
    from bot.files import append_text
    from bot.models.index import installed_index
    from bot.run.shard import assign_shards, read_durations
    from bot.select import select_cells, write_selection
    from bot.select.catalog import load_catalog
    from bot.select.changes import resolve
    from bot.select.request import parse_request, request_cells
    from bot.settings import load_settings

    request = parse_request(request_json)
    settings = load_settings(config or repo / "pyproject.toml")
    base_sha, head_sha = resolve(repo, base), resolve(repo, head)
    if request.uses_git:
        selection = select_cells(repo, base_sha, head_sha, settings)
        if settings.backends:
            # The repository gates on some backends only ([tool.export-bot] backends).
            kept = tuple(c for c in selection.cells if c.backend in settings.backends)
            selection = dataclasses.replace(selection, cells=kept)
        cells, described = list(selection.cells), selection.to_json()
    else:
        cells = request_cells(request, load_catalog(settings), installed_index())
        described = {
            "summary": f"{len(cells)} cells named by `/export-check {request.kind}`",
            "request": request.kind,
            "cells": [c.id for c in cells],
        }
    times = read_durations(durations) if durations else None
    count = max(1, min(shards, len(cells)))
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
    }
    if json_out:
        extra = {k: v for k, v in document.items() if k != "cells"}
        write_selection(json_out, cells, **extra)
    if github_output:
        append_text(
            github_output,
            f"matrix={json.dumps(document['matrix'])}\ncount={len(cells)}\nshards={len(parts)}\n"
            f"probe={'true' if request.probe else 'false'}\n",
        )
    click.echo(json.dumps(document, indent=2))
