"""`export-bot site`: nightly baseline reports → the static conformance dashboard (docs/reports.md)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import click

from bot.cli.common import handle_errors, resolve_skiplists
from bot.cli.options import FOLDER, skiplists_option


@click.command()
@click.option(
    "--reports",
    "report_paths",
    type=click.Path(path_type=Path),
    multiple=True,
    required=True,
    metavar="FILE|DIR",
    help="report.json files, or folders searched for them (repeat; one report per nightly run).",
)
@click.option("--out", type=FOLDER, required=True, help="Folder to write the site into.")
@skiplists_option()
@click.option(
    "--repo-url", default=None, help="e.g. https://github.com/OWNER/REPO: links commits and the compare between runs."
)
@click.option(
    "--skiplist-url",
    default=None,
    help="URL of the skiplist folder at the newest run's commit (…/blob/SHA/skiplists): skips link to their TOML line.",
)
@handle_errors
def site(report_paths, out, skiplists_dir, repo_url, skiplist_url) -> None:
    """Build the dashboard: the grid of every cell, per-cell history, pass rate per backend over time."""
    from bot.site import load_runs, write_site

    runs = load_runs(report_paths)
    written = write_site(
        runs,
        out,
        skiplists=resolve_skiplists(skiplists_dir),
        families=_zoo_families(),
        repo_url=repo_url.rstrip("/") if repo_url else None,
        skiplist_url=skiplist_url,
        generated=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    sizes = ", ".join(f"{name} {size / 1024:,.0f} KiB" for name, size in written.sizes.items())
    click.echo(
        f"site: {written.runs} runs, {written.cells:,} cells of {written.classes:,} model classes → "
        f"{written.out}/index.html ({written.total / 1024:,.0f} KiB: {sizes})"
    )


def _zoo_families() -> dict[str, str]:
    """Every auto-mapped class's family, for reports that do not name them (the catalogue is plain JSON)."""
    from bot.models.catalog import load

    return {name: entry.family for name, entry in load().entries.items()}
