"""Reading and writing the user's files: bounded regular files in, whole files out (parent made, atomic, umask honoured)."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from bot.errors import BotError

# The largest input file read whole. A full sweep's JUnit is tens of megabytes; a file past
# this is not an input the bot wrote, and reading it would only exhaust the runner's memory.
MAX_INPUT_BYTES = 512 * 1024 * 1024


class NotText(BotError, ValueError):
    """A file that should be UTF-8 text is not (a binary file, another encoding); the message names the byte."""


class NotAFile(BotError, ValueError):
    """An input path that is not a regular file (a FIFO, a device, a socket), or one too large to read whole."""


def read_bytes(path: Path | str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes; every command reads its input files through here.

    A FIFO would block the command forever and `/dev/zero` would fill the memory, so anything
    but a regular file is refused before it is opened, and at most `limit` bytes are read.
    A folder stays an `IsADirectoryError` and a missing file a `FileNotFoundError`: OSErrors
    that carry the path (the CLI turns them into one line, exit 2).
    """
    path = Path(path)
    mode = path.stat().st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        raise NotAFile(f"{path}: not a regular file ({_kind(mode)}); pass a file")
    # O_NONBLOCK: should the path become a FIFO between the check and the open, the open does not wait.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotAFile(f"{path}: not a regular file ({_kind(status.st_mode)}); pass a file")
        data = handle.read(limit + 1) if status.st_size <= limit else b""
    if status.st_size > limit or len(data) > limit:
        raise NotAFile(f"{path}: larger than {limit:,} bytes, too large to be an input of the bot; pass the right file")
    return data


def check_inputs(paths) -> None:
    """Refuse, before any work, an input path that exists and is neither a folder nor a regular file.

    For commands that read an input only after a long step (`check` reads main's JUnit after
    running the cells): a FIFO found then would waste the run, and block.
    """
    for path in map(Path, paths):
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # missing: the reader says so in its own words
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            raise NotAFile(f"{path}: not a regular file ({_kind(mode)}); pass a file")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO, which would block the command"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read_text(path: Path | str, limit: int = MAX_INPUT_BYTES) -> str:
    """The file's text, decoded as UTF-8 (`read_bytes`' checks); OSErrors (a missing file) pass through.

    Bytes, not `read_text`: universal newlines would turn CRLF into LF, and a writer that keeps
    the author's line endings (the skiplist editor) must see them.
    """
    data = read_bytes(path, limit)
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
    temp = _stage(path, data)
    try:
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def append_text(path: Path | str, text: str) -> None:
    """Append to `path` (made, with its folder, when missing): for files others write to too ($GITHUB_OUTPUT)."""
    with open_append(Path(path)) as stream:
        stream.write(text)


def open_append(path: Path):
    """`path` opened for appending text, made when missing; a FIFO nothing reads is refused, never waited on.

    O_NONBLOCK makes opening a FIFO without a reader fail at once (ENXIO) instead of blocking the
    command for good; a pipe someone reads (`--github-output /dev/stdout | …`) still opens.
    """
    make_parent(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        raise NotAFile(
            f"{path}: not a regular file (a FIFO nothing reads, which would block the command); pass a file"
        ) from None
    os.set_blocking(fd, True)  # a reader is there: wait for it as any write would
    return os.fdopen(fd, "a", encoding="utf-8")


def write_files(texts: Mapping[Path, str], appends: Mapping[Path, str] | None = None) -> None:
    """Write every file of `texts` and append to every file of `appends`, or, on an error, none of them.

    Each new file is written beside its target first and the appended-to files are opened; only
    when all of that worked are the texts appended and the files moved into place. A command
    that fails on its last output (an unwritable `--summary`) thus leaves no report behind.
    """
    staged: list[tuple[Path, Path]] = []
    handles = []
    try:
        for path, text in texts.items():
            staged.append((_stage(Path(path), text.encode("utf-8")), Path(path)))
        for path in appends or {}:
            handles.append(open_append(Path(path)))
    except BaseException:
        for handle in handles:
            handle.close()
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        raise
    for handle, text in zip(handles, (appends or {}).values()):
        with handle:
            handle.write(text)
    for temp, path in staged:
        os.replace(temp, path)


def _stage(path: Path, data: bytes) -> Path:
    """`data` in a temporary file beside `path`, with the mode `path` has or the umask gives."""
    _check_target(path)
    make_parent(path)
    temp, fd = _create_beside(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        try:
            os.chmod(temp, path.stat().st_mode & 0o7777)
        except FileNotFoundError:
            pass  # a new file: the umask already chose its mode
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _check_target(path: Path) -> None:
    """Refuse to write over what is not a regular file: the write replaces the path, so `/dev/null` or a
    FIFO someone reads would itself be replaced by a file (for everyone, when run as root)."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # a new file (make_parent names a file in the way of its folder)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        raise NotAFile(f"{path}: not a regular file ({_kind(mode)}), which a write would replace; pass a file")


def check_option_path(path: Path, *, file_okay: bool) -> None:
    """Refuse, before a command starts, a path option's value that no reading or writing could use:

    - a symbolic link to nothing: read, it would pass for a file not made yet (no baseline, no
      base); written, the link would be replaced. Either way the setup is broken;
    - a FIFO or a device where a folder is meant;
    - where a file is meant, a FIFO no one reads or a device other than a terminal: reading one
      would block or never end, writing over it would replace it. A pipe someone reads and a
      terminal stay usable as an output (`--github-output /dev/stdout | …`).
    """
    if path.is_symlink() and not path.exists():
        raise NotAFile(f"{path}: a symbolic link to {os.readlink(path)}, which does not exist; fix the link")
    try:
        status = path.stat()
    except OSError:
        return  # missing or unreadable: the command says so in its own words
    if stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode):
        return
    if not file_okay:
        raise NotAFile(f"{path}: not a folder ({_kind(status.st_mode)}); pass a folder")
    if not _usable_stream(path, status):
        raise NotAFile(f"{path}: not a regular file ({_kind(status.st_mode)}); pass a file")


def _usable_stream(path: Path, status: os.stat_result) -> bool:
    """A FIFO someone reads (it opens for writing at once), or the terminal this command writes to.

    Other devices are never opened: opening some of them acts (a watchdog starts counting).
    """
    if stat.S_ISCHR(status.st_mode):
        return any(os.isatty(fd) and os.fstat(fd).st_rdev == status.st_rdev for fd in (0, 1, 2))
    if not stat.S_ISFIFO(status.st_mode):
        return False
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False  # ENXIO: no one reads it
    os.close(fd)
    return True


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
