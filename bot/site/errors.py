"""The dashboard's one expected error: bad input to `export-bot site`, named with what to do."""

from __future__ import annotations

from bot.errors import BotError


class SiteError(BotError, ValueError):
    """Reports or skiplists the site cannot be built from; the message names the file."""
