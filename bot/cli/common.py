"""Options shared by several commands, defined once, and the mapping of bot errors to exit codes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import click

from bot.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, BotError

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "BotError", "handle_errors"]

# Package data, so an installed wheel has them too; the repository's skiplists/ links here.
DEFAULT_SKIPLISTS = Path(__file__).resolve().parents[1] / "data" / "skiplists"

skiplists_option = click.option(
    "--skiplists",
    "skiplists_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder holding export_skips.toml and onnx_disable_optimize.toml "
    "(default: [tool.export-bot] skiplists, else the bot's own skiplists/).",
)


# The slice of the matrix `run` and `check` both take, spelled and explained once.
_MATRIX_OPTIONS = (
    click.option(
        "--backends", multiple=True, help="dynamo, onnx, openvino, executorch (repeat or comma-separate; default all)."
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


def matrix_options(fn: Callable) -> Callable:
    """--backends, --shapes, --generate/--no-generate and --probe, in that order."""
    for option in reversed(_MATRIX_OPTIONS):
        fn = option(fn)
    return fn


def _workers(ctx, param, value: str) -> int | str:
    if value == "auto":
        return value
    if value.isdigit():
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


def handle_errors(fn: Callable) -> Callable:
    """Turn the bot's own errors (and ValueErrors raised on bad input) into a message and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BotError as exc:
            click.echo(f"error: {exc}", err=True)
            raise SystemExit(exc.exit_code) from None

    return wrapper


def resolve_skiplists(skiplists_dir: Path | None, settings=None) -> Path:
    """--skiplists, else `[tool.export-bot] skiplists`, else the bot's own skiplists/.

    A folder the configuration names but that does not exist is an error: falling back to
    the bot's own lists there would judge a repository against the wrong skips.
    """
    if skiplists_dir is not None:
        if not skiplists_dir.is_dir():
            raise BotError(f"{skiplists_dir}: no such skiplist folder; pass --skiplists DIR")
        return skiplists_dir
    if settings is None:
        from bot.settings import SettingsError, load_settings

        try:
            settings = load_settings()
        except SettingsError as exc:
            raise BotError(str(exc)) from None
    if "skiplists" in settings.configured:
        if not settings.skiplists.is_dir():
            raise BotError(
                f"{settings.skiplists}: the skiplist folder [tool.export-bot] skiplists names does not exist"
            )
        return settings.skiplists
    return settings.skiplists if settings.skiplists.is_dir() else DEFAULT_SKIPLISTS
