"""The one seam between the jobs and the stages they compose: each stage is called from here only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bot.report.model import Report
from bot.results import ResultSet


def read_junit(paths: Sequence[Path], expect_shards: int | None = None) -> ResultSet:
    from bot.results import read_results

    return read_results(list(paths), expect_shards=expect_shards)


def load_skiplists(folder: Path):
    from bot.skiplist.model import load_skiplists

    return load_skiplists(folder)


def diff_results(base: ResultSet | None, head: ResultSet, skiplists, rerun: ResultSet | None, **context) -> Report:
    """Categories and verdict (docs/diff.md); `context` is the shas, run link, changed lines and repository URL."""
    from bot.diff import diff

    return diff(base, head, skiplists, rerun, **context)


def propose(report: Report, folder: Path) -> tuple[dict, str]:
    """The proposal's report.json slot and its unified patch (docs/proposals.md)."""
    from bot.propose.proposal import propose

    proposal = propose(report, folder)
    return proposal.to_json(), proposal.patch


def render(report: Report) -> tuple[str, str, str]:
    """report.json's text, the PR comment and the job summary."""
    from bot.report import render_comment, render_summary

    text = json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n"
    return text, render_comment(report), render_summary(report)
