"""The skiplist files as texts: read once at the edge, parsed in memory, written back whole and atomically.

The proposal works on `{file name: text}` (bot/propose/proposal.py), so a caller that has the
texts from elsewhere (publish: a pull request's head, through the API) needs no folder on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bot import toml as tomllib
from bot.diff.proposal import FILES
from bot.files import read_text, write_text
from bot.skiplist.model import Skiplist, SkiplistError, Skiplists, scopes_from_toml

Texts = Mapping[str, str]  # skiplist file name (`export_skips.toml`) → its text


def read_texts(folder: Path | str) -> dict[str, str]:
    """The skiplist files of `folder` that exist, as the editor reads them (CRLF kept)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SkiplistError(f"{folder}: no such skiplist folder; pass --skiplists DIR")
    return {name: read_text(folder / name) for name in FILES if (folder / name).is_file()}


def parse_texts(texts: Texts, folder: Path | str = "skiplists") -> Skiplists:
    """The skiplists the texts hold, as `load_skiplists` reads them from a folder; a missing file is empty."""
    loaded = []
    for name in FILES:
        where = Path(folder) / name
        try:
            data = tomllib.loads(texts.get(name, ""))
        except tomllib.TOMLDecodeError as exc:
            raise SkiplistError(f"{where}: {exc}; run `export-bot skiplist lint {where}` for details") from exc
        loaded.append(Skiplist(name, scopes_from_toml(data, str(where))))
    return Skiplists(*loaded)


def write_texts(folder: Path | str, files: Texts) -> list[Path]:
    """Write each changed file whole (atomically, bot/files.py); the paths written, in name order."""
    written = []
    for name in sorted(files):
        path = Path(folder) / name
        write_text(path, files[name])
        written.append(path)
    return written
