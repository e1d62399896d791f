"""`export-bot zoo coverage|catalog`: what the zoo builds of the installed Transformers, and its catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import click

from bot.cli.common import EXIT_FAILURE, EXIT_OK, BotError, handle_errors
from bot.cli.options import FILE, summary_option


@click.group()
def zoo() -> None:
    """The zoo source: every catalogued Transformers model class (auto-mapped, or exported under its config's model type) built tiny from its config class."""


@zoo.command()
@click.option("--classes", "only", multiple=True, help="Check only these classes (repeat or comma-separate).")
@click.option("--family", multiple=True, help="Check only classes of these families.")
@click.option(
    "--results",
    type=FILE,
    default=Path("zoo-coverage.jsonl"),
    show_default=True,
    help="One JSON line per class; an existing file is resumed, not redone.",
)
@click.option("--json", "json_path", type=FILE, help="Write the JSON summary here.")
@summary_option("Append the table here (e.g. $GITHUB_STEP_SUMMARY).")
@click.option("--chunk", type=click.IntRange(min=1), default=40, show_default=True, help="Classes per worker process.")
@click.option("--generate", is_flag=True, help="Also run a 2-token eager generate for generative classes.")
@click.option(
    "--min-percent", type=float, default=None, help="Exit 1 when fewer classes than this build and run eager."
)
@click.option("--write-catalog", is_flag=True, help="Record the not-buildable classes in bot/models/catalog.json.")
@handle_errors
def coverage(
    only, family, results: Path, json_path, summary_out, chunk: int, generate: bool, min_percent, write_catalog: bool
) -> None:
    """Build every catalogued class tiny and run eager forward, in worker processes; print the table."""
    from bot.files import write_files
    from bot.models import catalog
    from bot.models.sources.zoo import coverage as cov

    entries = catalog.generate().entries if write_catalog else catalog.load().entries
    names = _chosen(entries, only, family)

    def progress(done: int, total: int) -> None:
        click.echo(f"{done}/{total} classes checked", err=True)

    found = cov.sweep(names, results, chunk=chunk, generate=generate, log=progress)
    version = catalog.load().transformers_version
    result = cov.summarize(found)
    table = cov.markdown(result, transformers_version=version)
    click.echo(table)
    texts = {json_path: json.dumps(cov.as_json(result, found, transformers_version=version), indent=1) + "\n"}
    write_files({p: t for p, t in texts.items() if p}, {summary_out: table} if summary_out else None)
    if write_catalog:
        _write_catalog(found)
    if min_percent is not None and result.percent < min_percent:
        raise SystemExit(EXIT_FAILURE)
    raise SystemExit(EXIT_OK)


@zoo.command(name="catalog")
@click.option(
    "--check", is_flag=True, help="Exit 1 when bot/models/catalog.json differs from the installed Transformers."
)
@handle_errors
def catalog_command(check: bool) -> None:
    """Regenerate bot/models/catalog.json from the installed Transformers' auto mappings (keeps coverage notes)."""
    from bot.files import read_text, write_text
    from bot.models import catalog

    current = catalog.load()
    fresh = catalog.generate()
    kept = {n: e.not_buildable for n, e in current.entries.items() if e.not_buildable}
    text = catalog.dump(catalog.Catalogue(catalog.with_coverage(fresh.entries, kept), fresh.transformers_version))
    if check:
        same = read_text(catalog.DATA) == text
        click.echo(f"{catalog.DATA}: {'up to date' if same else 'stale: run export-bot zoo catalog'}")
        raise SystemExit(EXIT_OK if same else EXIT_FAILURE)
    write_text(catalog.DATA, text)
    click.echo(f"{catalog.DATA}: {len(fresh.entries)} classes of transformers {fresh.transformers_version}")


def _chosen(entries: dict, only: tuple[str, ...], family: tuple[str, ...]) -> list[str]:
    """The classes --classes (a usage error when one is in no auto mapping) and --family leave of `entries`."""
    names = [n for n in entries if not family or entries[n].family in family]
    wanted = {n.strip() for item in only for n in item.split(",") if n.strip()}
    if wanted:
        unknown = sorted(wanted - set(entries))
        if unknown:
            raise BotError(f"--classes: {', '.join(unknown)} not in any auto mapping (see bot/models/catalog.json)")
        names = [n for n in names if n in wanted]
    return names


def _write_catalog(found) -> None:
    from bot.files import write_text
    from bot.models import catalog
    from bot.models.sources.zoo.coverage import NOT_BUILDABLE

    fresh = catalog.generate()
    reasons = {r.model_class: r.reason or "not buildable" for r in found if r.status == NOT_BUILDABLE}
    text = catalog.dump(catalog.Catalogue(catalog.with_coverage(fresh.entries, reasons), fresh.transformers_version))
    write_text(catalog.DATA, text)
    catalog.load.cache_clear()
    click.echo(f"{catalog.DATA}: {len(reasons)} classes recorded as not buildable", err=True)
