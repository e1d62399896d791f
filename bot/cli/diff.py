"""`export-bot diff`: base and head JUnit → verdict, report.json, comment markdown and job summary."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import EXIT_FAILURE, EXIT_OK, BotError, handle_errors, resolve_skiplists, skiplists_option

_files = dict(type=click.Path(path_type=Path), multiple=True, metavar="FILE|DIR")


@click.command()
@click.option("--base", "base_files", **_files, help="Main's JUnit files or folders (repeat); none: no baseline.")
@click.option("--head", "head_files", **_files, required=True, help="This run's JUnit files or folders (repeat).")
@click.option("--rerun", "rerun_files", **_files, help="JUnit of the re-run of newly broken cells (repeat).")
@skiplists_option
@click.option("--expect-shards", type=click.IntRange(min=1), default=None, help="Head must hold shards 1/N … N/N.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write report.json here.")
@click.option("--markdown", "markdown_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the PR comment here.")
@click.option("--summary", "summary_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the job summary here (e.g. $GITHUB_STEP_SUMMARY; appended to).")
@click.option("--base-sha", default=None, help="Base commit (default: the base JUnit's git sha).")
@click.option("--head-sha", default=None, help="Head commit (default: the head JUnit's git sha).")
@click.option("--run-url", default=None, help="Link to this workflow run, shown in the comment.")
@handle_errors
def diff(base_files, head_files, rerun_files, skiplists_dir, expect_shards, json_out, markdown_out, summary_out,
         base_sha, head_sha, run_url) -> None:
    """Diff head results against main's and judge them: exit 0 success or neutral, 1 failure, 2 bad input."""
    from bot.diff import diff as diff_results
    from bot.report import render_comment, render_summary, write_report
    from bot.results import read_results
    from bot.skiplist.model import SkiplistError, load_skiplists

    missing = [str(p) for p in head_files if not p.exists()]
    if len(missing) == len(head_files):
        raise BotError(f"no head results: {', '.join(missing)} not found; pass the JUnit files `export-bot run` wrote")
    try:
        skiplists = load_skiplists(resolve_skiplists(skiplists_dir))
    except SkiplistError as exc:
        raise BotError(str(exc)) from exc
    head = read_results(head_files, expect_shards=expect_shards)
    base = read_results(base_files) if base_files else None
    rerun = read_results(rerun_files) if rerun_files else None
    report = diff_results(base, head, skiplists, rerun, base_sha=base_sha, head_sha=head_sha, run_url=run_url)

    if json_out:
        write_report(report, json_out)
    if markdown_out:
        markdown_out.write_text(render_comment(report), encoding="utf-8")
    if summary_out:
        with summary_out.open("a", encoding="utf-8") as stream:
            stream.write(render_summary(report))
    counts = ", ".join(f"{name.replace('_', ' ')} {len(lines):,}" for name, lines in report.categories.items() if lines)
    click.echo(f"verdict: {report.verdict}: {report.headline}")
    if counts:
        click.echo(counts)
    for problem in report.problems:
        click.echo(f"problem: {problem}", err=True)
    if report.verdict == "neutral":
        click.echo(f"neutral: the results are incomplete ({len(report.problems)} problems); this is not a pass", err=True)
    raise SystemExit(EXIT_FAILURE if report.verdict == "failure" else EXIT_OK)
