"""`export-bot diff`: base and head JUnit → verdict, report.json, comment markdown and job summary."""

from __future__ import annotations

import click

from bot.cli.common import handle_errors, resolve_skiplists, verdict_exit
from bot.cli.options import FILE, junit_paths_option, report_options


@click.command()
@junit_paths_option("--base", "base_files", "Main's JUnit files or folders (repeat); none: no baseline.")
@junit_paths_option("--head", "head_files", "This run's JUnit files or folders (repeat).")
@junit_paths_option("--rerun", "rerun_files", "JUnit of the re-run of newly broken cells (repeat).")
@click.option("--json", "json_out", type=FILE, help="Write report.json here.")
@click.option("--markdown", "markdown_out", type=FILE, help="Write the PR comment here.")
@report_options
@handle_errors
def diff(
    base_files,
    head_files,
    rerun_files,
    skiplists_dir,
    expect_shards,
    json_out,
    markdown_out,
    summary_out,
    base_sha,
    head_sha,
    run_url,
    selection,
) -> None:
    """Diff head results against main's and judge them: exit 0 success or neutral, 1 failure, 2 bad input."""
    from bot.jobs.inputs import stage_settings
    from bot.jobs.report import ReportInputs, ReportOutputs, make_report, read_selected
    from bot.skiplist.model import read_skiplists

    settings = stage_settings(selection)
    skiplists = read_skiplists(resolve_skiplists(skiplists_dir, settings))
    inputs = ReportInputs.under(
        settings,
        head=tuple(head_files),
        base=tuple(base_files),
        rerun=tuple(rerun_files),
        selected=read_selected(selection),
        expect_shards=expect_shards,
        base_sha=base_sha,
        head_sha=head_sha,
        run_url=run_url,
    )
    outputs = ReportOutputs(report=json_out, comment=markdown_out, append_summary=summary_out)
    report = make_report(inputs, outputs, skiplists).report
    counts = ", ".join(f"{name.replace('_', ' ')} {len(lines):,}" for name, lines in report.categories.items() if lines)
    click.echo(f"verdict: {report.verdict}: {report.headline}")
    if counts:
        click.echo(counts)
    for problem in report.problems:
        click.echo(f"problem: {problem}", err=True)
    if report.verdict == "neutral":
        missing = len(report.category("missing"))
        lacking = f"{missing} selected cells with no result, " if missing else ""
        lacking += "no cell at all, " if report.no_cells else ""
        click.echo(
            f"neutral: the results are incomplete ({lacking}{len(report.problems)} problems); this is not a pass",
            err=True,
        )
    raise SystemExit(verdict_exit(report.verdict))
