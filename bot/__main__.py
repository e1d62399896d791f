"""Allow `python -m bot` as a spelling of the `export-bot` console script."""

from bot.cli import main

main()
