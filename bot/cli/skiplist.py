"""`export-bot skiplist lint|explain|import|check-tables`: check skiplists, explain a cell, import or compare Python tables."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bot.cli.common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, handle_errors, resolve_skiplists
from bot.cli.options import recorded_walk_option, skiplists_option
from bot.cli.run_options import source_option


@click.group()
def skiplist() -> None:
    """Lint, explain and import skiplists (TOML: scope → model class → reason)."""


@skiplist.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Exit 1 when there are warnings.")
@source_option
@recorded_walk_option
@handle_errors
def lint(paths: tuple[Path, ...], strict: bool, source: str | None, recorded_walk: tuple[Path, ...]) -> None:
    """Check skiplist files (default: the configured skiplists folder). Exit 2 on errors.

    With `--source transformers-tests:PATH` (or that source configured) and a checkout holding
    tests/exporters/test_export.py, scopes are those the checkout's own walk visits: as a run
    recorded it (`--recorded-walk`), and as its text reads.
    """
    from bot.jobs.skiplist import lint_files
    from bot.settings import load_settings

    settings = load_settings()
    walk = _walk(source or settings.source, recorded_walk)
    results = lint_files(paths or (resolve_skiplists(None, settings),), walk)
    for result in results:
        for finding in result.findings:
            click.echo(str(finding))
    for result in results:
        click.echo(result.summary())
    if any(r.errors for r in results):
        raise SystemExit(EXIT_USAGE)
    raise SystemExit(EXIT_FAILURE if strict and any(r.warnings for r in results) else EXIT_OK)


@skiplist.command()
@click.argument("cell_ids", nargs=-1, required=True, metavar="CELL_ID...")
@skiplists_option()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per cell, in a list.")
@source_option
@recorded_walk_option
@handle_errors
def explain(
    cell_ids: tuple[str, ...],
    skiplists_dir: Path | None,
    as_json: bool,
    source: str | None,
    recorded_walk: tuple[Path, ...],
) -> None:
    """Say which scope skips each cell (e.g. `BertModel::test_onnx_export_dynamic`), and why.

    A checkout's own export tests (`--source transformers-tests:PATH`) are explained by their walk:
    as a run recorded it for the cell (`--recorded-walk`), else as the module's text reads.
    """
    from bot.cells import Cell, placed
    from bot.errors import BotError
    from bot.settings import load_settings
    from bot.skiplist.explain import render_explanation
    from bot.skiplist.model import read_skiplists

    settings = load_settings()
    cells = [Cell.parse(cell_id) for cell_id in cell_ids]
    loaded = read_skiplists(resolve_skiplists(skiplists_dir, settings))
    walk = _walk(source or settings.source, recorded_walk)
    unplaced = [cell for cell in cells if not placed(cell)]
    if walk is None and unplaced:  # the bot's walk has no scope for it: say so rather than guess
        what = f"backend `{unplaced[0].backend}`" if unplaced[0].backend else "a test that names no backend"
        raise BotError(
            f"{unplaced[0].id}: the bot's own walk has no scope for {what}; "
            "pass --source transformers-tests:PATH, whose export module's own walk can tell"
        )
    skiplists = loaded.with_walk(walk).skiplists
    explanations = [skiplists.explain(cell) for cell in cells]
    if as_json:
        click.echo(json.dumps([e.to_json() for e in explanations], indent=2, ensure_ascii=False))
        return
    click.echo("\n\n".join(render_explanation(e, skiplists) for e in explanations))


@skiplist.command(name="check-tables")
@click.option(
    "--checkout",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The Transformers checkout whose tests/exporters/test_export.py holds the skip tables.",
)
@skiplists_option("The TOML skiplists to compare with (default: the checkout's [tool.export-bot] skiplists).")
@handle_errors
def check_tables(checkout: Path, skiplists_dir: Path | None) -> None:
    """Check that the checkout's Python skip tables and its TOML skiplists agree, entry by entry.

    Each literal table of tests/exporters/test_export.py (`EXPORT_SKIPS`, `ONNX_DISABLE_OPTIMIZE`, …)
    against the TOML file of its name in lower case (default folder: the checkout's
    `[tool.export-bot] skiplists`). Exit 0 when they agree (a table the module reads from the TOML
    agrees by construction), 1 listing each difference, 2 on bad input.
    """
    from bot.jobs.skiplist import check_tables as check

    found = check(checkout, skiplists_dir)
    for difference in found.differences:
        click.echo(str(difference))
    for file in found.missing:
        click.echo(f"{file}: the module defines no {file.removesuffix('.toml').upper()} table")
    said = [f"{', '.join(found.compared) or 'no table'} compared"]
    said += [f"{', '.join(found.read_from_toml)} read from the TOML"] if found.read_from_toml else []
    problems = len(found.differences) + len(found.missing)
    click.echo(f"{'; '.join(said)}: {problems} difference{'s' if problems != 1 else ''}")
    raise SystemExit(EXIT_FAILURE if problems else EXIT_OK)


def _walk(source: str | None, recorded: tuple[Path, ...]):
    from bot.jobs.skiplist import followed_walk, recorded_results

    return followed_walk(source, recorded_results(recorded) if recorded else None)


@skiplist.command(name="import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", default=None, help="Import only this module-level dict (default: every skip table).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="With --name, the TOML file; else the folder that gets one NAME.toml per table (default: stdout).",
)
@handle_errors
def import_(file: Path, name: str | None, output: Path | None) -> None:
    """Turn a module's skip tables into skiplist TOML, one file per table (never runs the module).

    Every upper-case dict of scope → model class → reason (or → names) becomes the file of the
    same name in lower case (`EXPORT_SKIPS` → export_skips.toml), the file the checkout's own
    export tests read it from. A table that cannot be converted is named with why.
    """
    if name is not None:
        _import_one(file, name, output)
        return
    from bot.errors import BotError
    from bot.files import write_files
    from bot.jobs.skiplist import import_tables

    if output is not None and output.suffix == ".toml":
        raise BotError(f"-o {output}: every table is imported, so -o names a folder; pass --name NAME for one file")
    imported = import_tables(file)
    if output is None:
        click.echo("\n".join(f"# {table}\n{text}" for table, text in imported.texts.items()), nl=False)
    else:
        write_files({output / table: text for table, text in imported.texts.items()})
    for table, (entries, scopes) in imported.entries.items():
        click.echo(f"{output / table if output else table}: {entries} entries in {scopes} scopes", err=True)
    for line in imported.refused:
        click.echo(f"warning: {line}", err=True)


def _import_one(file: Path, name: str, output: Path | None) -> None:
    from bot.files import write_bytes
    from bot.jobs.skiplist import import_file

    text, entries, scopes = import_file(file, name)
    if output is None:
        click.echo(text, nl=False)
        return
    write_bytes(output, text.encode("utf-8"))
    click.echo(f"{output}: {entries} entries in {scopes} scopes", err=True)
