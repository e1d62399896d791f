"""The path options of a command, checked before it runs: what no reading or writing could use is refused."""

from __future__ import annotations

from pathlib import Path

import click

from bot.files import check_option_path


def check_path_options(ctx: click.Context | None) -> None:
    """Every `click.Path` option and argument of the running command (bot/files.check_option_path)."""
    for param in ctx.command.params if ctx is not None else ():
        if not isinstance(param.type, click.Path):
            continue
        value = ctx.params.get(param.name)
        for path in value if isinstance(value, (tuple, list)) else [value] if value is not None else []:
            check_option_path(Path(path), file_okay=param.type.file_okay)
