"""`export-bot report`: the conformance workflow's report job in one command (diff → re-run → diff → propose)."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import EXIT_OK, BotError, handle_errors, resolve_skiplists, skiplists_option, workers_option

_folders = dict(type=click.Path(path_type=Path), multiple=True, metavar="FILE|DIR")


@click.command()
@click.option("--base", "base_paths", **_folders, help="Main's baseline JUnit (repeat); missing paths: no baseline.")
@click.option("--head", "head_paths", **_folders, help="The shards' JUnit files or folders (repeat).")
@click.option(
    "--selection",
    "selection_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="`export-bot select --json` output; an empty selection needs no head and the comment says why "
    "(none: a sweep, e.g. the nightly baseline).",
)
@click.option(
    "--expect-shards", type=click.IntRange(min=0), default=0, help="Head must hold shards 1/N … N/N (0: off)."
)
@click.option("--base-sha", default=None, help="Base commit (default: the base JUnit's git sha).")
@click.option("--head-sha", default=None, help="Head commit (default: the head JUnit's git sha).")
@click.option(
    "--tested-sha", default=None, help="The commit the cells ran on, when not the head (the PR's test merge)."
)
@click.option("--run-url", default=None, help="Link to this workflow run, shown in the comment.")
@skiplists_option
@workers_option("2")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out"),
    show_default=True,
    help="Folder for report.json, comment.md, summary.md, rerun.xml and skiplists.patch.",
)
@click.option(
    "--summary",
    "summary_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also append the job summary here (e.g. $GITHUB_STEP_SUMMARY).",
)
@handle_errors
def report(
    base_paths,
    head_paths,
    selection_file,
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
    from dataclasses import replace
    from datetime import datetime, timezone

    from bot.cells import Cell
    from bot.cli.diff import _selection, repository_url
    from bot.diff import diff
    from bot.files import append_text, write_text
    from bot.propose.proposal import propose
    from bot.report import render_comment, render_summary, write_report
    from bot.results import read_results
    from bot.skiplist.model import load_skiplists

    summary, selected, changed_lines = _selection(selection_file)
    folder = resolve_skiplists(skiplists_dir)
    skiplists = load_skiplists(folder)
    head_paths = [p for p in head_paths if p.exists()]
    if selected == set():
        head_paths, expect_shards = [], 0  # nothing selected, so no shard ran
    elif not head_paths:
        raise BotError("no head results; pass the folder of the shards' JUnit files with --head")
    head = read_results(head_paths, expect_shards=expect_shards or None)
    base_paths = [p for p in base_paths if p.exists()]
    base = read_results(base_paths) if base_paths else None
    if base is not None and selected is not None:
        base = base.restricted_to(selected)  # main's sweep seen through this PR's cells
    shas = dict(
        base_sha=base_sha,
        head_sha=head_sha,
        run_url=run_url,
        changed_lines=changed_lines,
        repository_url=repository_url(),
    )
    result = diff(base, head, skiplists, **shas)
    if result.needs_rerun:
        # docs/diff.md: a newly broken cell is re-run once before it is reported; disagreement is flaky.
        rerun = out / "rerun.xml"
        cells = [Cell.parse(cell_id) for cell_id in result.needs_rerun]
        click.echo(f"re-running {len(cells)} newly broken cells once to confirm them → {rerun}", err=True)
        _rerun(cells, rerun, workers, folder)
        result = diff(base, head, skiplists, read_results([rerun]), **shas)
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    result = replace(result.with_selection(summary).with_created(created), tested_sha=tested_sha)
    if selected == set() and summary:
        # Nothing ran: the status says why ("no export-relevant changes"), not "no failing cells".
        result = replace(result, headline=summary.splitlines()[0])
    proposal = propose(result, folder)
    result = result.with_proposal(proposal.to_json())
    write_report(result, out / "report.json")
    write_text(out / "comment.md", render_comment(result))
    rendered = render_summary(result)
    write_text(out / "summary.md", rendered)
    if proposal.patch:
        write_text(out / "skiplists.patch", proposal.patch)
    if summary_out:
        append_text(summary_out, rendered)
    click.echo(f"verdict: {result.verdict}: {result.headline}")
    raise SystemExit(EXIT_OK)


def _rerun(cells: list, junit: Path, workers, skiplists: Path) -> None:
    """Run `cells` once more (the only part of this command that imports torch and the backends)."""
    from bot.check import _run
    from bot.run.planning import build_plan
    from bot.settings import load_settings

    _run(build_plan(named=cells, skiplists=skiplists, settings=load_settings()), junit, workers)
