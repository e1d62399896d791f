"""Options several commands take, each declared once here and reused by name (those that run cells: run_options.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import click

# The two kinds of path an option takes: a file (never a folder) and a folder (never a file).
FILE = click.Path(dir_okay=False, path_type=Path)
FOLDER = click.Path(file_okay=False, path_type=Path)


def skiplists_option(
    help: str = "Folder holding export_skips.toml and onnx_disable_optimize.toml "
    "(default: [tool.export-bot] skiplists, else the bot's own skiplists/).",
    *,
    required: bool = False,
    default: Path | None = None,
) -> Callable:
    """`--skiplists DIR`, the skiplist folder: optional and resolved by `resolve_skiplists`, unless a command
    that runs on main's behalf asks for it (`required`) or names its own `default`."""
    return click.option(
        "--skiplists",
        "skiplists_dir",
        type=FOLDER,
        required=required,
        default=default,
        show_default=default is not None,
        help=help,
    )


def state_option(help: str, *, folder: bool = True, multiple: bool = False) -> Callable:
    """`--state`: main's baseline state, its baseline.json or (with `folder`) a folder holding it.

    `multiple`: the states to fold into one (`baseline merge`), none meaning start anew; else one, required.
    """
    return click.option(
        "--state",
        "states" if multiple else "state",
        required=not multiple,
        multiple=multiple,
        type=click.Path(dir_okay=folder, path_type=Path),
        metavar="DIR|FILE" if folder else None,
        help=help,
    )


def run_id_option(help: str = "This workflow run (GITHUB_RUN_ID).") -> Callable:
    return click.option("--run-id", type=click.IntRange(min=0), envvar="GITHUB_RUN_ID", default=0, help=help)


def github_output_option(help: str) -> Callable:
    """`--github-output FILE`: where a step's outputs are appended, `name=value` lines ($GITHUB_OUTPUT)."""
    return click.option("--github-output", type=FILE, default=None, help=help)


def stacked(*options: Callable) -> Callable:
    """Several options as one decorator; --help lists them in the order given."""

    def decorate(fn: Callable) -> Callable:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


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
    return click.option("--selection", type=FILE, default=None, help=help)


def summary_option(help: str) -> Callable:
    return click.option("--summary", "summary_out", type=FILE, help=help)


def report_option(help: str, *, required: bool = False) -> Callable:
    """`--report FILE`: a report.json the diff wrote."""
    return click.option("--report", "report_path", type=FILE, required=required, help=help)


def config_option(default: str = "REPO/pyproject.toml") -> Callable:
    return click.option(
        "--config",
        type=FILE,
        default=None,
        help=f"pyproject.toml holding [tool.export-bot] (default: {default}).",
    )


# What `diff` and `report` both take besides the JUnit: the skiplists that judge, what the report says
# about the run (its selection, commits and page), and where the job summary is appended.
report_options = stacked(
    skiplists_option(),
    selection_file_option(
        "`export-bot select --json` output: its summary goes into the report, and every selected cell must "
        "have a result (one without is missing: neutral, with the shards to re-run); when it selected nothing, "
        "no head results are needed and the comment says why (none: a sweep, e.g. the nightly baseline)."
    ),
    click.option("--base-sha", default=None, help="Base commit (default: the base JUnit's git sha)."),
    click.option("--head-sha", default=None, help="Head commit (default: the head JUnit's git sha)."),
    click.option("--run-url", default=None, help="Link to this workflow run, shown in the comment."),
    summary_option("Append the job summary here (e.g. $GITHUB_STEP_SUMMARY)."),
    click.option(
        "--expect-shards",
        type=click.IntRange(min=0),
        default=0,
        callback=lambda ctx, param, value: value or None,  # 0: off, as when it is not given
        help="Head must hold shards 1/N … N/N (0: off).",
    ),
)


min_passes_option = click.option(
    "--min-passes",
    type=click.IntRange(min=1),
    default=None,
    help="Consecutive passing probe runs an obsolete skip's removal needs (default: [tool.export-bot] min-passes, 3).",
)


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
