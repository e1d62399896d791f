"""`export-bot diff`: base and head JUnit → verdict, report.json, comment markdown and job summary."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    handle_errors,
    junit_paths_option,
    resolve_skiplists,
    selection_file_option,
    sha_options,
    skiplists_option,
    summary_option,
)


@click.command()
@junit_paths_option("--base", "base_files", "Main's JUnit files or folders (repeat); none: no baseline.")
@junit_paths_option("--head", "head_files", "This run's JUnit files or folders (repeat).")
@junit_paths_option("--rerun", "rerun_files", "JUnit of the re-run of newly broken cells (repeat).")
@skiplists_option
@click.option("--expect-shards", type=click.IntRange(min=1), default=None, help="Head must hold shards 1/N … N/N.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write report.json here.")
@click.option(
    "--markdown", "markdown_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the PR comment here."
)
@summary_option("Write the job summary here (e.g. $GITHUB_STEP_SUMMARY; appended to).")
@sha_options
@selection_file_option(
    "`export-bot select --json` output: its summary goes into the report; when it selected "
    "nothing, no head results are needed and the comment says why."
)
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
    selection_file,
) -> None:
    """Diff head results against main's and judge them: exit 0 success or neutral, 1 failure, 2 bad input."""
    from bot.jobs.report import ReportInputs, ReportOutputs, drift_rule, make_report, read_selected
    from bot.settings import load_settings

    settings = load_settings()
    inputs = ReportInputs(
        head=tuple(head_files),
        skiplists=resolve_skiplists(skiplists_dir, settings),
        source=settings.source,
        base=tuple(base_files),
        rerun=tuple(rerun_files),
        selected=read_selected(selection_file),
        expect_shards=expect_shards,
        base_sha=base_sha,
        head_sha=head_sha,
        run_url=run_url,
        drift=drift_rule(settings),
    )
    outputs = ReportOutputs(report=json_out, comment=markdown_out, append_summary=summary_out)
    report = make_report(inputs, outputs).report
    counts = ", ".join(f"{name.replace('_', ' ')} {len(lines):,}" for name, lines in report.categories.items() if lines)
    click.echo(f"verdict: {report.verdict}: {report.headline}")
    if counts:
        click.echo(counts)
    for problem in report.problems:
        click.echo(f"problem: {problem}", err=True)
    if report.verdict == "neutral":
        click.echo(
            f"neutral: the results are incomplete ({len(report.problems)} problems); this is not a pass", err=True
        )
    raise SystemExit(EXIT_FAILURE if report.verdict == "failure" else EXIT_OK)
