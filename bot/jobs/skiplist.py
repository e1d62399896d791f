"""The skiplist jobs: lint files, and import a Python skip dict as a checked skiplist document."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bot.errors import BotError


def lint_files(paths: Iterable[Path]) -> list:
    """One `LintResult` per file (a folder stands for its *.toml); a file that cannot be read is an error finding."""
    from bot.files import NotText, read_text
    from bot.models.index import installed_index
    from bot.skiplist.lint import ERROR, Finding, LintResult, lint_text

    files = _toml_files(paths)
    classes = installed_index().classes or None  # no Transformers installed: skip that check
    results = []
    for path in files:
        try:
            text = read_text(path)
        except (OSError, NotText) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc).partition(": ")[2]
            results.append(LintResult(str(path), (Finding(str(path), 1, 1, ERROR, f"cannot read: {reason}"),)))
            continue
        results.append(lint_text(text, str(path), known_classes=classes))
    return results


def _toml_files(paths: Iterable[Path]) -> list[Path]:
    files = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.toml"))
            if not found:
                raise BotError(f"{path}: no *.toml skiplists in this folder")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise BotError(f"{path}: no such file or folder")
    return files


def import_file(file: Path, name: str):
    """The skiplist TOML of `file`'s `name = {...}` literal, as a parsed document (never runs the module).

    The importer refuses what the TOML could not hold (a duplicate key, a non-string) at its
    line in `file`, so the generated text is checked under the file's name before anything is written.
    """
    from bot.files import read_text
    from bot.skiplist.document import SkiplistDocument
    from bot.skiplist.importer import import_skiplist

    text = import_skiplist(read_text(file), name, str(file))
    return SkiplistDocument.parse(text, f"the TOML generated from {file}")
