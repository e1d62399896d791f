"""What every command shares besides its options: the skiplists it judges by, and bot errors mapped to exit codes."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import click

from bot.cli.paths import check_path_options
from bot.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, BotError

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "BotError", "handle_errors"]

# The bot's own skiplists: package data in an installed wheel (setup.py copies the repository's
# skiplists/ there at build time), the repository's skiplists/ in a source checkout.
_PACKAGED_SKIPLISTS = Path(__file__).resolve().parents[1] / "data" / "skiplists"
DEFAULT_SKIPLISTS = (
    _PACKAGED_SKIPLISTS if _PACKAGED_SKIPLISTS.is_dir() else Path(__file__).resolve().parents[2] / "skiplists"
)


def verdict_exit(verdict: str) -> int:
    """The exit code of a verdict: 1 for failure, 0 for success and neutral (said loudly where it is printed)."""
    return EXIT_FAILURE if verdict == "failure" else EXIT_OK


def handle_errors(fn: Callable) -> Callable:
    """The one place the bot's expected errors become a message and an exit code (README, "Command reference").

    A `BotError` prints its one line and exits with its `exit_code` (2, or 1 for a run that
    did not complete). An `OSError` is a path the user gave that cannot be read or written
    (missing, a folder, no permission): one line naming the path, exit 2.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            check_path_options(click.get_current_context(silent=True))
            return fn(*args, **kwargs)
        except BotError as exc:
            click.echo(f"error: {exc}", err=True)
            raise SystemExit(exc.exit_code) from None
        except OSError as exc:
            click.echo(f"error: {describe_os_error(exc)}", err=True)
            raise SystemExit(EXIT_USAGE) from None

    return wrapper


def verify_tested_transformers(checkout: Path | None, spec: str, project: Path = Path(".")) -> None:
    """Fail at once when a checkout is given and the transformers to be imported is not its own.

    `spec` is the model source planning uses (--source, else the settings'). Testing the package
    index's transformers instead of the pull request's code would report on other code than the
    one under review; the message says how to install the checkout.
    """
    from bot.run.provenance import expected_checkout, installed_transformers, verify_checkout

    want = expected_checkout(checkout, spec, project if _configures_bot(project / "pyproject.toml") else None)
    if want is not None:
        installed = installed_transformers()
        verify_checkout(want, installed.location, installed.version)


def _configures_bot(pyproject: Path) -> bool:
    from bot import toml
    from bot.files import read_text

    try:
        return "export-bot" in toml.loads(read_text(pyproject)).get("tool", {})
    except (OSError, BotError, toml.TOMLDecodeError):
        return False


def describe_os_error(exc: OSError) -> str:
    """`PATH: No such file or directory; check the path and its permissions`, in one line."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is None:
        return f"{reason}; check the paths you passed and their permissions"
    where = f"{exc.filename} → {exc.filename2}" if exc.filename2 is not None else str(exc.filename)
    return f"{where}: {reason}; check the path and its permissions"


def repository_skiplists(skiplists_dir: Path | None, settings) -> Path:
    """--skiplists, else `[tool.export-bot] skiplists` (`skiplists/` unset): a repository's own folder, for the
    commands that act on its default branch, which never fall back to the bot's lists."""
    folder = skiplists_dir if skiplists_dir is not None else settings.skiplists
    if not folder.is_dir():
        where = "--skiplists" if skiplists_dir is not None else "[tool.export-bot] skiplists"
        raise BotError(f"{folder}: no such skiplist folder (from {where}); set [tool.export-bot] skiplists")
    return folder


def skiplists_in_repository(folder: Path, root: Path) -> str:
    """`folder` as a path in the repository whose root is `root` (the pyproject's folder), for the API."""
    try:
        # Normalised, not resolved: a skiplist folder that is a symlink inside the checkout is still
        # named by its place in the repository, which is all the API is given.
        return Path(os.path.abspath(folder)).relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        raise BotError(
            f"{folder}: the skiplist folder is outside the repository at {root}; pass --skiplists-path"
        ) from None


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
        from bot.settings import load_settings

        settings = load_settings()
    if "skiplists" in settings.configured:
        if not settings.skiplists.is_dir():
            raise BotError(
                f"{settings.skiplists}: the skiplist folder [tool.export-bot] skiplists names does not exist"
            )
        return settings.skiplists
    return settings.skiplists if settings.skiplists.is_dir() else DEFAULT_SKIPLISTS
