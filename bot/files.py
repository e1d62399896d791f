"""Reading and writing the user's files: UTF-8 text in, whole files out (parent made, atomic, umask honoured)."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

from bot.errors import BotError


class NotText(BotError, ValueError):
    """A file that should be UTF-8 text is not (a binary file, another encoding); the message names the byte."""


def read_text(path: Path | str) -> str:
    """The file's text, decoded as UTF-8; OSErrors (a missing file) pass through, carrying the path.

    Bytes, not `read_text`: universal newlines would turn CRLF into LF, and a writer that keeps
    the author's line endings (the skiplist editor) must see them.
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise NotText(f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start}); pass a text file") from None


def write_text(path: Path | str, text: str) -> None:
    """Replace `path` with `text`, so a reader sees the old file or the new one, never half of one.

    A missing parent folder is made. The temporary file is created with mode 0666 and lets
    the umask take its share, as `open()` does (tempfile.mkstemp would give 0600); replacing an
    existing file keeps that file's mode.
    """
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path | str, data: bytes) -> None:
    path = Path(path)
    make_parent(path)
    temp, fd = _create_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            os.chmod(temp, path.stat().st_mode & 0o7777)
        except FileNotFoundError:
            pass  # a new file: the umask already chose its mode
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def append_text(path: Path | str, text: str) -> None:
    """Append to `path` (made, with its folder, when missing): for files others write to too ($GITHUB_OUTPUT)."""
    path = Path(path)
    make_parent(path)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(text)


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def make_parent(path: Path) -> None:
    """Make the folder `path` goes in; a file in the way is an OSError that names both."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in path.parents if p.exists()), path.parent)
        raise NotADirectoryError(errno.ENOTDIR, f"cannot make its folder, {blocker} is a file", str(path)) from None


def _create_beside(path: Path) -> tuple[Path, int]:
    # In the target's folder, so os.replace is a rename within one file system.
    while True:
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return temp, os.open(temp, _FLAGS, 0o666)
        except FileExistsError:
            continue
