"""Report stage: the report.json schema and the pure renderers of the PR comment and job summary."""

from bot.report.comment import COMMENT_MARKER, render_comment
from bot.report.model import CATEGORIES, SCHEMA, CellLine, Report, ReportError, load_report, write_report
from bot.report.summary import render_summary

__all__ = [
    "CATEGORIES",
    "COMMENT_MARKER",
    "SCHEMA",
    "CellLine",
    "Report",
    "ReportError",
    "load_report",
    "render_comment",
    "render_summary",
    "write_report",
]
