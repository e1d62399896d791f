"""`export-bot diff`: base and head JUnit → verdict, report.json, comment markdown and job summary."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import click

from bot.cli.common import EXIT_FAILURE, EXIT_OK, BotError, handle_errors, resolve_skiplists, skiplists_option

_files = dict(type=click.Path(path_type=Path), multiple=True, metavar="FILE|DIR")


@click.command()
@click.option("--base", "base_files", **_files, help="Main's JUnit files or folders (repeat); none: no baseline.")
@click.option("--head", "head_files", **_files, help="This run's JUnit files or folders (repeat).")
@click.option("--rerun", "rerun_files", **_files, help="JUnit of the re-run of newly broken cells (repeat).")
@skiplists_option
@click.option("--expect-shards", type=click.IntRange(min=1), default=None, help="Head must hold shards 1/N … N/N.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), help="Write report.json here.")
@click.option(
    "--markdown", "markdown_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the PR comment here."
)
@click.option(
    "--summary",
    "summary_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the job summary here (e.g. $GITHUB_STEP_SUMMARY; appended to).",
)
@click.option("--base-sha", default=None, help="Base commit (default: the base JUnit's git sha).")
@click.option("--head-sha", default=None, help="Head commit (default: the head JUnit's git sha).")
@click.option("--run-url", default=None, help="Link to this workflow run, shown in the comment.")
@click.option(
    "--selection",
    "selection_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="`export-bot select --json` output: its summary goes into the report; when it selected "
    "nothing, no head results are needed and the comment says why.",
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
    from bot.diff import diff as diff_results
    from bot.diff.model import write_report
    from bot.files import append_text, write_text
    from bot.report import render_comment, render_summary
    from bot.results import read_results
    from bot.skiplist.model import load_skiplists

    summary, selected, changed_lines = _selection(selection_file)
    if selected == set():
        # Nothing was selected, so no shard ran: an empty head is the complete result.
        head_files, expect_shards = (), None
    elif not any(p.exists() for p in head_files):
        missing = ", ".join(map(str, head_files)) or "none given"
        raise BotError(f"no head results ({missing}); pass the JUnit files `export-bot run` wrote with --head")
    skiplists = load_skiplists(resolve_skiplists(skiplists_dir))
    head = read_results(head_files, expect_shards=expect_shards)
    base = read_results(base_files) if base_files else None
    if base is not None and selected is not None:
        base = base.restricted_to(selected)
    rerun = read_results(rerun_files) if rerun_files else None
    report = diff_results(
        base,
        head,
        skiplists,
        rerun,
        base_sha=base_sha,
        head_sha=head_sha,
        run_url=run_url,
        changed_lines=changed_lines,
        repository_url=repository_url(),
    )
    report = report.with_selection(summary).with_created(datetime.now(timezone.utc).isoformat(timespec="seconds"))

    if json_out:
        write_report(report, json_out)
    if markdown_out:
        write_text(markdown_out, render_comment(report))
    if summary_out:
        append_text(summary_out, render_summary(report))
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


def _selection(path: Path | None) -> tuple[str | None, set | None, dict | None]:
    """The selection's summary, cells and changed lines; (None, None, None) without --selection."""
    if path is None:
        return None, None, None
    from bot.select.selection_file import changed_lines_of, read_selection_document

    cells, document = read_selection_document(path)
    changed = changed_lines_of(document, path)
    return str(document.get("summary") or "") or None, set(cells), changed


def repository_url() -> str | None:
    """The repository's web address in a workflow (`GITHUB_SERVER_URL`/`GITHUB_REPOSITORY`), for culprit links."""
    repository = os.environ.get("GITHUB_REPOSITORY")
    if not repository:
        return None
    return f"{os.environ.get('GITHUB_SERVER_URL') or 'https://github.com'}/{repository}"
