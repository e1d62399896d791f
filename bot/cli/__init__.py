"""The `export-bot` command line: a thin click layer that loads each command only when it is called."""

from __future__ import annotations

import importlib
import logging

import click

from bot import __version__

# name → "module:attribute". Loading lazily keeps `export-bot diff` and the publishing
# commands well under a second: only `run` and `check` pull in torch and the backends.
COMMANDS = {
    "bisect": "bot.cli.bisect:bisect",
    "baseline": "bot.cli.baseline:baseline",
    "check": "bot.cli.check:check",
    "run": "bot.cli.run:run",
    "select": "bot.cli.select:select",
    "diff": "bot.cli.diff:diff",
    "propose": "bot.cli.propose:propose",
    "skiplist": "bot.cli.skiplist:skiplist",
    "github": "bot.cli.github:github",
    "site": "bot.cli.site:site",
    "install-spec": "bot.cli.install_spec:install_spec",
    "report": "bot.cli.report:report",
    "zoo": "bot.cli.zoo:zoo",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attribute = target.split(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="export-bot")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def main(verbose: int) -> None:
    """The conformance gatekeeper for model export in Transformers."""
    logging.basicConfig(level=logging.WARNING - 10 * min(verbose, 2), format="%(levelname)s %(name)s: %(message)s")
    if verbose < 2:
        quiet_libraries()


# Library notices logged at import that say nothing about an export, shown before the bot's first
# line on every run: torchao's CUDA kernels absent from a CPU install, no Triton on a CPU runner,
# a pytree registration torch deprecated. `-vv` shows them again.
QUIET_LOGGERS = ("torchao", "torch.utils._pytree")


def quiet_libraries() -> None:
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
