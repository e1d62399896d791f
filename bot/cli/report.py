"""`export-bot report`: the conformance workflow's report job in one command (diff → re-run → diff → propose)."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import EXIT_OK, handle_errors, resolve_skiplists
from bot.cli.options import FOLDER, junit_paths_option, report_options
from bot.cli.run_options import workers_option


@click.command()
@junit_paths_option(
    "--base",
    "base_paths",
    "Main's baseline: a folder holding baseline.json (judged at --merge-base), or JUnit files or folders "
    "(repeat); missing paths: no baseline.",
)
@click.option(
    "--merge-base",
    default=None,
    callback=lambda ctx, param, value: _full_sha(value),
    help="The PR's merge base (`export-bot github merge-base`): each cell's base is its newest result on main "
    "at or before it. Empty: unknown, main's newest results are used.",
)
@junit_paths_option("--head", "head_paths", "The shards' JUnit files or folders (repeat).")
@report_options
@click.option(
    "--tested-sha", default=None, help="The commit the cells ran on, when not the head (the PR's test merge)."
)
@workers_option("2")
@click.option(
    "--out",
    type=FOLDER,
    default=Path("out"),
    show_default=True,
    help="Folder for report.json, comment.md, summary.md, rerun.xml and skiplists.patch.",
)
@handle_errors
def report(
    base_paths,
    merge_base,
    head_paths,
    selection,
    expect_shards,
    base_sha,
    head_sha,
    tested_sha,
    run_url,
    skiplists_dir,
    workers,
    out,
    summary_out,
) -> None:
    """Diff the shards against main's baseline, re-run newly broken cells once, propose, write the report.

    Exits 0 whatever the verdict (it travels in report.json to the comment job, which sets the
    status), 1 when the confirming re-run did not complete, 2 on bad input.
    """
    from bot.jobs.inputs import stage_settings
    from bot.jobs.report import ReportInputs, ReportOutputs, make_report, read_selected
    from bot.jobs.run import named_rerunner
    from bot.skiplist.model import read_skiplists

    settings = stage_settings(selection)
    skiplists = read_skiplists(resolve_skiplists(skiplists_dir, settings))
    inputs = ReportInputs.under(
        settings,
        head=tuple(head_paths),
        base=tuple(base_paths),
        selected=read_selected(selection),
        expect_shards=expect_shards,
        base_sha=base_sha,
        head_sha=head_sha,
        tested_sha=tested_sha,
        run_url=run_url,
        skip_missing=True,
        merge_base=merge_base,
    )
    outputs = ReportOutputs.in_folder(out, append_summary=summary_out)
    echo = lambda line: click.echo(line, err=True)  # noqa: E731
    outcome = make_report(inputs, outputs, skiplists, rerun=named_rerunner(skiplists, settings, workers), echo=echo)
    click.echo(f"verdict: {outcome.report.verdict}: {outcome.report.headline}")
    raise SystemExit(EXIT_OK)


def _full_sha(value: str | None) -> str | None:
    """A full commit SHA, lower case; empty means unknown (a workflow passes its step output as it is)."""
    value = (value or "").strip().lower()
    if not value:
        return None
    if len(value) != 40 or any(c not in "0123456789abcdef" for c in value):
        raise click.BadParameter(f"{value[:60]!r} is not a full 40-character commit SHA (`git rev-parse`)")
    return value
