"""`export-bot install-spec`: how to install the runner part pinned to this bot (README "Installing")."""

from __future__ import annotations

from pathlib import Path

import click

from bot import __version__

CONSTRAINTS = Path(__file__).resolve().parents[1] / "data" / "constraints-runner.txt"


@click.command("install-spec")
@click.option(
    "--constraints",
    "constraints",
    is_flag=True,
    help="Print the path of the shipped constraints file (the runner's tested versions) instead.",
)
def install_spec(constraints: bool) -> None:
    """Print the requirement of this bot's runner part, `export-bot[runner]==VERSION`, or the constraints path.

    torch and transformers are never in it: the job installs torch==2.13.0 first and then the
    transformers it tests (a checkout, editable), and the runner part leaves both in place.
    """
    click.echo(str(CONSTRAINTS) if constraints else f"export-bot[runner]=={__version__}")
