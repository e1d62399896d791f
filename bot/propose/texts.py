"""The skiplist files as texts: written back whole and atomically (bot/skiplist/model.py reads them).

The proposal works on `{file name: text}` (bot/propose/proposal.py), so a caller that has the
texts from elsewhere (publish: a pull request's head, through the API) needs no folder on disk.
"""

from __future__ import annotations

from pathlib import Path

from bot.files import write_text
from bot.skiplist.model import Texts


def write_texts(folder: Path | str, files: Texts) -> list[Path]:
    """Write each changed file whole (atomically, bot/files.py); the paths written, in name order."""
    written = []
    for name in sorted(files):
        path = Path(folder) / name
        write_text(path, files[name])
        written.append(path)
    return written
