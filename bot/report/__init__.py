"""Report stage: the pure renderers of the PR comment and job summary (the report.json schema is bot/diff/model.py)."""

from bot.report.comment import COMMAND_MARKER, COMMAND_NOTE, COMMENT_MARKER, render_comment
from bot.report.summary import render_summary

__all__ = ["COMMAND_MARKER", "COMMAND_NOTE", "COMMENT_MARKER", "render_comment", "render_summary"]
