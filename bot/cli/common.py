"""Options shared by several commands, defined once, and the mapping of bot errors to exit codes."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

import click

from bot import registry
from bot.cli.paths import check_path_options
from bot.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, BotError

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "BotError", "handle_errors"]

# The bot's own skiplists: package data in an installed wheel (setup.py copies the repository's
# skiplists/ there at build time), the repository's skiplists/ in a source checkout.
_PACKAGED_SKIPLISTS = Path(__file__).resolve().parents[1] / "data" / "skiplists"
DEFAULT_SKIPLISTS = (
    _PACKAGED_SKIPLISTS if _PACKAGED_SKIPLISTS.is_dir() else Path(__file__).resolve().parents[2] / "skiplists"
)

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


def matrix_options(fn: Callable) -> Callable:
    """--backends, --shapes, --generate/--no-generate and --probe, in that order."""
    for option in reversed(_MATRIX_OPTIONS):
        fn = option(fn)
    return fn


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


# Options several commands take, each spelled once.
_junit_paths = dict(type=click.Path(path_type=Path), multiple=True, metavar="FILE|DIR")


def junit_paths_option(flag: str, name: str, help: str) -> Callable:
    """A repeatable JUnit file-or-folder option (`--base`, `--head`, `--rerun`, `--base-junit`)."""
    return click.option(flag, name, **_junit_paths, help=help)


recorded_walk_option = click.option(
    "--recorded-walk",
    "recorded_walk",
    **_junit_paths,
    help="JUnit of a run of the checkout's own export tests (repeat): its cells follow the scopes "
    "the module really looked up, as recorded; any other cell the module's walk read from its text.",
)


def selection_file_option(help: str) -> Callable:
    return click.option(
        "--selection", "selection_file", type=click.Path(dir_okay=False, path_type=Path), default=None, help=help
    )


def summary_option(help: str) -> Callable:
    return click.option("--summary", "summary_out", type=click.Path(dir_okay=False, path_type=Path), help=help)


config_option = click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="pyproject.toml holding [tool.export-bot] (default: REPO/pyproject.toml).",
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

_SHA_OPTIONS = (
    click.option("--base-sha", default=None, help="Base commit (default: the base JUnit's git sha)."),
    click.option("--head-sha", default=None, help="Head commit (default: the head JUnit's git sha)."),
    click.option("--run-url", default=None, help="Link to this workflow run, shown in the comment."),
)


def sha_options(fn: Callable) -> Callable:
    """--base-sha, --head-sha and --run-url: what `diff` and `report` put in the report about the run."""
    for option in reversed(_SHA_OPTIONS):
        fn = option(fn)
    return fn


# A plain https address: no space, quote, parenthesis, query or fragment (the bot appends `#cell=…`).
_DASHBOARD = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%/-]*)?")


def check_dashboard_url(value: str) -> str | None:
    """`--dashboard-url`: None when empty; a usage error (exit 2) that says what it must look like otherwise."""
    if not value:
        return None
    if len(value) > 500 or not _DASHBOARD.fullmatch(value):
        raise click.BadParameter(
            f"{value[:100]!r} is not a plain https:// address; give the dashboard's page, "
            "such as https://OWNER.github.io/REPO/ (no query, fragment, space or quote)",
            param_hint="--dashboard-url",
        )
    return value


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


checkout_option = click.option(
    "--checkout",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The Transformers checkout under test: exit 2 unless `import transformers` loads its src/transformers "
    "(default: the PATH of --source transformers-tests:PATH, or the repository whose pyproject.toml has "
    "[tool.export-bot], when either holds src/transformers).",
)


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
