"""`export-bot propose`: a report (and probe history) → the skiplist patch; `--apply` writes it."""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.common import EXIT_OK, BotError, handle_errors, resolve_skiplists, skiplists_option


@click.command()
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The report.json `export-bot diff` wrote.",
)
@click.option(
    "--history",
    "history_paths",
    type=click.Path(path_type=Path),
    multiple=True,
    metavar="FILE",
    help="Earlier probe runs, oldest first (report.json or JUnit; repeat). The report is the newest.",
)
@click.option(
    "--min-passes",
    type=click.IntRange(min=1),
    default=None,
    help="Consecutive passing probe runs a removal needs when --history is given "
    "(default: [tool.export-bot] min-passes, 3).",
)
@skiplists_option
@click.option("--apply", "apply_", is_flag=True, help="Write the proposed edits into the skiplist files.")
@click.option("--write-report", is_flag=True, help="Store the proposal in the report's `proposal` slot.")
@handle_errors
def propose(report_path, history_paths, min_passes, skiplists_dir, apply_, write_report) -> None:
    """Propose skiplist edits for a report: entries for new failures, removals of obsolete skips.

    Prints the unified diff on stdout (ready for `git apply`) and what it could not cover on
    stderr. Exit 0 whether or not something is proposed; 2 on bad input.
    """
    from bot.diff.model import load_report
    from bot.diff.model import write_report as store_report
    from bot.propose.proposal import propose as make_proposal
    from bot.propose.proposal import results_from_report
    from bot.propose.texts import parse_texts, read_texts, write_texts
    from bot.settings import load_settings

    settings = load_settings()
    report = load_report(report_path)
    history = [_read_history(path) for path in history_paths if not _same_file(path, report_path)]
    folder = resolve_skiplists(skiplists_dir, settings)
    texts = read_texts(folder)
    proposal = make_proposal(
        report,
        results_from_report(report),
        parse_texts(texts, folder),
        texts,
        history=history,
        min_passes=min_passes or settings.min_passes,
        folder=folder.name,
    )
    written = write_texts(folder, proposal.files) if apply_ else []

    if proposal.patch:
        click.echo(proposal.patch, nl=False)
    else:
        click.echo("no skiplist change proposed", err=True)
    for edit in proposal.entries:
        target = f" → {', '.join(edit.new_scopes)}" if edit.new_scopes else ""
        cells = f"{len(edit.evidence)} cell{'s' if len(edit.evidence) != 1 else ''}"
        click.echo(f"{edit.action}: {edit.model_class} in {edit.scope}{target} ({cells})", err=True)
    for cell in proposal.uncoverable:
        click.echo(
            f"uncoverable: {cell.cell}: `{cell.finest_scope}`, its narrowest scope, would also skip "
            f"{len(cell.would_skip)} passing or skipped cells; left for a maintainer",
            err=True,
        )
    for path in written:
        click.echo(f"wrote {path}", err=True)
    if write_report:
        store_report(report.with_proposal(proposal), report_path)
    raise SystemExit(EXIT_OK)


def _read_history(path: Path):
    """A report.json's cell results, else JUnit's (a file or a folder of shards)."""
    from bot.diff.model import load_report
    from bot.propose.proposal import results_from_report
    from bot.results import read_results

    if not path.exists():
        raise BotError(f"{path}: history file not found; pass earlier report.json or JUnit files")
    from bot.files import read_bytes

    # read_bytes refuses a FIFO or a device before opening it: it would block the command.
    if not path.is_dir() and read_bytes(path)[:512].lstrip().startswith(b"{"):
        return results_from_report(load_report(path))
    results = read_results([path])
    if results.problems:
        raise BotError(f"{results.problems[0]} (history file {path})")
    return results.results


def _same_file(a: Path, b: Path) -> bool:
    return a.exists() and b.exists() and a.resolve() == b.resolve()
