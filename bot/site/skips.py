"""Where each skiplist entry sits: (scope, model class) → (file, line), so a skipped cell links to its TOML line."""

from __future__ import annotations

from pathlib import Path

from bot.files import read_text
from bot.site.errors import SiteError
from bot.skiplist.layout import LayoutError, scan
from bot.skiplist.model import EXPORT_SKIPS


def skip_lines(text: str, file: str = EXPORT_SKIPS) -> dict[tuple[str, str], tuple[str, int]]:
    """Every `Class = "reason"` entry of one skiplist text with its 1-based line (pure)."""
    found = {}
    for table in scan(text).tables:
        for entry in table.entries:
            found[(table.scope, entry.name)] = (file, entry.line)
    return found


def read_skip_lines(folder: Path) -> dict[tuple[str, str], tuple[str, int]]:
    """The skip file of a skiplist folder (none there: no links); a file that is not TOML is refused."""
    path = folder / EXPORT_SKIPS
    try:
        text = read_text(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SiteError(f"{path}: cannot read the skiplist ({exc})") from exc
    try:
        return skip_lines(text, path.name)
    except LayoutError as exc:
        raise SiteError(
            f"{path}:{exc.line}:{exc.column}: {exc.message}; run `export-bot skiplist lint {path}`"
        ) from exc
