"""`export-bot select`: changed files between two refs → cells, reasons and a shard matrix, as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bot.cli.common import handle_errors
from bot.cli.options import FILE, config_option, github_output_option
from bot.cli.run_options import durations_option


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
    help="Split the cells into N shards for the GitHub Actions job matrix (with --shard-minutes: at most N).",
)
@click.option(
    "--shard-minutes",
    type=click.FloatRange(min=1),
    default=None,
    help="Size the shards by the selection's cost: as many as keep each shard's estimated cell time under "
    "this many minutes (recorded or --durations times, 2 workers), at most --shards.",
)
@durations_option("balance the shards")
@config_option(default="pyproject.toml at --base, read with git: a pull request does not narrow its own gate")
@click.option(
    "--json",
    "json_out",
    type=FILE,
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
@github_output_option(
    "Append `matrix=`, `count=`, `shards=`, `probe=`, `full=` and `due=` lines here ($GITHUB_OUTPUT)."
)
@click.option(
    "--pin-file",
    default=None,
    help="On a push to main: the caller workflow that pins export-bot (e.g. .github/workflows/export-baseline.yml). "
    "A push changing the pin makes a full sweep due: the new bot measures with its own toolchain.",
)
@click.option(
    "--footprints",
    type=click.Path(path_type=Path),  # not there: main has no baseline yet, which the selection says
    default=None,
    help="Main's baseline.json (or the folder `export-bot github baseline --out` wrote): a changed file some "
    "cell executed on main's sweeps selects the cells that ran its changed functions (docs/selection.md). "
    "None there (no baseline yet) or none recorded: the import graph decides and the selection says why; "
    "a file there that is no readable baseline is an error.",
)
@handle_errors
def select(
    repo: Path,
    base: str,
    head: str,
    shards: int,
    shard_minutes: float | None,
    durations: Path | None,
    config: Path | None,
    json_out: Path | None,
    request_json: str | None,
    github_output: Path | None,
    pin_file: str | None,
    footprints: Path | None,
) -> None:
    """Print the cells a pull request must run, why, and the shard matrix, as JSON.

    Every shard job gets the same selection file and runs `export-bot run --selection FILE
    --shard I/N [--durations FILE]`; sharding is deterministic, so shard I there holds exactly
    the cells listed under `shards[I-1]` here. On a push to main, `full_sweep_due` lists why every
    cell must be re-measured: a shared path or a skiplist changed, a change reached more classes
    through the import graph than it sampled, or the bot's pin in --pin-file (docs/workflows.md).
    """
    from bot.jobs.select import select_job
    from bot.settings import load_settings

    document = select_job(
        repo,
        base,
        head,
        load_settings(config) if config else None,  # None: the base's pyproject, read with git
        shards=shards,
        shard_minutes=shard_minutes,
        durations=durations,
        request_json=request_json,
        json_out=json_out,
        github_output=github_output,
        pin_file=pin_file,
        footprints=footprints,
    )
    click.echo(json.dumps(document, indent=2))
