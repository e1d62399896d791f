"""The report's error: a report.json this version cannot read (bot/diff/model.py, bot/diff/proposal.py)."""

from bot.errors import BotError


class ReportError(BotError, ValueError):
    """A report.json this version cannot read; the message names the file and what to do."""
