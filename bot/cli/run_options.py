"""The options that say which cells run and how: the matrix, workers, the model source, the checkout, cell times.

`run` and `check` take them all; `select`, `report`, `propose` and `skiplist` reuse single ones. Every other
option several commands take is in bot/cli/options.py; each is declared once, in one of the two.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from bot import registry
from bot.cli.options import FOLDER, skiplists_option, stacked

# The slice of the matrix `run` and `check` both take, spelled and explained once.
_MATRIX_OPTIONS = (
    click.option(
        "--backends",
        multiple=True,
        help=f"{', '.join(registry.NAMES)} (repeat or comma-separate; default all).",
    ),
    click.option("--shapes", multiple=True, help="static, dynamic (repeat or comma-separate; default both)."),
    click.option(
        "--generate/--no-generate",
        default=True,
        show_default=True,
        help="Include the generate path of generative classes.",
    ),
    click.option(
        "--probe",
        is_flag=True,
        help="Also run skiplisted cells, recording probe=true and their real outcome "
        "(finds skips that are no longer needed).",
    ),
)


def _workers(ctx, param, value: str) -> int | str:
    if value == "auto":
        return value
    if value.isascii() and value.isdigit():  # `²` is a digit to isdigit(), not to int()
        return int(value)
    raise click.BadParameter(f"{value!r}: a number of workers (0 runs in-process, without crash isolation) or 'auto'")


def workers_option(default: str) -> Callable:
    """`-n`: pytest-xdist workers, a number or `auto`; `run` and `check` differ only in the default."""
    return click.option(
        "-n",
        "workers",
        default=default,
        show_default=True,
        callback=_workers,
        help="pytest-xdist workers, or auto; 0 runs in-process (no crash isolation).",
    )


cell_timeout_option = click.option(
    "--cell-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds before a cell is stopped as a timeout (default: [tool.export-bot] cell-timeout, 1000).",
)


source_option = click.option(
    "--source", default=None, help="Model source: zoo or transformers-tests:PATH (default: [tool.export-bot] source)."
)


def durations_option(effect: str) -> Callable:
    """`--durations`: earlier cell times (main's baseline.json, or a run's JUnit), for what `effect` says they do."""
    return click.option(
        "--durations",
        type=click.Path(path_type=Path),  # a missing path is refused by the reader, with what to pass instead
        envvar="EXPORT_BOT_DURATIONS",
        default=None,
        help=f"An earlier run's JUnit (a file, or a folder of shard files), or main's baseline.json: its times "
        f"{effect} (default: EXPORT_BOT_DURATIONS; cells it lacks cost their recorded time).",
    )


def models_options(models: str, preset: str) -> Callable:
    """--models and --preset, the model classes to run; `run` and `check` combine them differently, said in the help."""
    return stacked(
        click.option("--models", multiple=True, help=f"Model classes (repeat or comma-separate){models}."),
        click.option("--preset", default=None, help=f"A preset of the model source{preset}."),
    )


checkout_option = click.option(
    "--checkout",
    type=FOLDER,
    default=None,
    help="The Transformers checkout under test: exit 2 unless `import transformers` loads its src/transformers "
    "(default: the PATH of --source transformers-tests:PATH, or the repository whose pyproject.toml has "
    "[tool.export-bot], when either holds src/transformers).",
)


def run_options(workers: str) -> Callable:
    """What `run` and `check` both take to run cells: the matrix (--backends, --shapes, --generate/--no-generate,
    --probe), then -n, --source, --skiplists, --cell-timeout and --checkout; -n's default is `workers`."""
    return stacked(
        *_MATRIX_OPTIONS,
        workers_option(workers),
        source_option,
        skiplists_option(),
        cell_timeout_option,
        checkout_option,
    )
