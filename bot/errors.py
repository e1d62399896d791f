"""The one base class of the bot's expected failures, caught once at the command line (exit 2)."""

from __future__ import annotations

# Exit codes (README, "Command reference"): 0 success, 1 verdict failure, 2 usage or input error.
EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class BotError(Exception):
    """Expected bad input or a refused operation: shown as one line that says what to do.

    Every error a user can cause or fix (a bad file, a bad setting, an unknown cell id, GitHub
    refusing a write) derives from this class, so the CLI boundary (`bot.cli.common.handle_errors`)
    catches it once and exits 2; nothing below the CLI converts errors by hand.
    """

    exit_code = EXIT_USAGE
