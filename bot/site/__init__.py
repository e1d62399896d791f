"""The conformance dashboard (docs/reports.md): nightly report.json files → one static, self-contained page."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.diff.model import load_report
from bot.site.data import SCHEMA, NightlyReport, build_data, build_figures
from bot.site.errors import SiteError
from bot.site.skips import read_skip_lines

__all__ = ["SCHEMA", "NightlyReport", "SiteError", "Written", "build_data", "find_reports", "load_runs", "write_site"]

ASSETS = Path(__file__).resolve().parent / "assets"
PAGE_FILES = ("index.html", "app.js", "style.css")
DATA_FILE = "data.js"  # a script, not JSON: the page then opens from file:// too, where fetch() is refused
FIGURES_FILE = "figures.js"  # each cell's figures, loaded (as a script too) when a cell's panel first opens
REPORT = "report.json"


@dataclass(frozen=True)
class Written:
    """What `write_site` wrote: the folder, its files with sizes, and the matrix it shows."""

    out: Path
    sizes: Mapping[str, int]
    runs: int
    cells: int
    classes: int

    @property
    def total(self) -> int:
        return sum(self.sizes.values())


def find_reports(paths: Iterable[Path]) -> list[Path]:
    """report.json files: each path is one, or a folder searched recursively (downloaded artifacts nest)."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            inside = sorted(path.rglob(REPORT))
            if not inside:
                raise SiteError(f"{path}: no {REPORT} in this folder; pass the folders of the nightly baseline reports")
            found += inside
        else:
            raise SiteError(f"{path}: no such file or folder; pass report.json files or folders holding them")
    return list(dict.fromkeys(found))


def load_runs(paths: Iterable[Path]) -> list[NightlyReport]:
    runs = []
    for path in find_reports(paths):
        # A ReportError is already one line that names the file.
        runs.append(NightlyReport(load_report(path), str(path)))
    if not runs:
        raise SiteError("no reports given; pass --reports DIR with the nightly baseline report.json files")
    return runs


def write_site(
    runs: list[NightlyReport],
    out: Path,
    *,
    skiplists: Path | None = None,
    families: Mapping[str, str] | None = None,
    repo_url: str | None = None,
    skiplist_url: str | None = None,
    generated: str | None = None,
) -> Written:
    """Write index.html, app.js, style.css, data.js and figures.js into `out` (created; files there are replaced)."""
    data = build_data(
        runs,
        skip_lines=read_skip_lines(skiplists) if skiplists else None,
        families=families,
        repo_url=repo_url,
        skiplist_url=skiplist_url,
        generated=generated,
    )
    out.mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name in PAGE_FILES:
        text = (ASSETS / name).read_text(encoding="utf-8")
        sizes[name] = _write(out / name, text)
    # `</` cannot end the script early when escaped; the data is read back with JSON.parse semantics.
    payload = json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    sizes[DATA_FILE] = _write(out / DATA_FILE, f"window.EXPORT_DASHBOARD = {payload};\n")
    figures = json.dumps(build_figures(runs), separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")
    sizes[FIGURES_FILE] = _write(out / FIGURES_FILE, f"window.EXPORT_FIGURES = {figures};\n")
    return Written(out, sizes, len(data["runs"]), len(data["cell_class"]), len(data["classes"]))


def _write(path: Path, text: str) -> int:
    """Atomically: a half-written page never goes live."""
    raw = text.encode("utf-8")
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(raw)
    os.replace(temporary, path)
    return len(raw)
