"""Read many JUnit files on two cores: the last ones in one forked worker process, the rest here.

A full sweep's base and head are 64 files and ~70 MB. The parse callbacks that make the
records are Python, so threads do not help (measured slower), but a process does. What comes
back are `FileRead` records of builtins, which pickle several times faster than result
objects would; turning them into results stays in this process (`merge.py`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from bot.results.junit import FileRead, read_file

log = logging.getLogger(__name__)

# Below this much XML a fork costs more than it saves (~10 ms against ~10 ms per MB read).
PARALLEL_BYTES = 8 * 2**20
# The worker also pickles what it read, and this process unpickles it, so the worker is
# given somewhat less than half of the bytes.
_WORKER_SHARE = 0.45


def read_files(files: Sequence[Path], parallel: bool | None = None) -> Iterator[FileRead]:
    """Each file's records, in the order given; `parallel=None` decides from size and machine.

    A generator, so the caller can turn one file's records into results before the next
    file is read, and the records do not all wait in memory at once.
    """
    sizes = [_size(path) for path in files] if parallel is not False and len(files) >= 2 else []
    if parallel is None:
        parallel = sum(sizes) >= PARALLEL_BYTES and can_fork()
    if not sizes or not parallel:
        yield from map(read_file, files)
        return
    # The worker takes a tail of the list, so the order is kept by reading the head here
    # first and then taking the worker's files as they were listed.
    split = _split(sizes)
    theirs = list(files[split:])
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    worker = context.Process(target=_read_all, args=(theirs, sender), name="junit-reader", daemon=True)
    worker.start()
    sender.close()  # the worker's end: closed here, so a dead worker reads as EOF, not a hang
    try:
        yield from map(read_file, files[:split])
        # Nothing is read from the pipe until this process is done with its own files: a
        # thread receiving meanwhile would contend for the GIL with the parse callbacks.
        reads = _received(receiver, theirs)
    finally:
        receiver.close()
        worker.join()
    yield from reads


def _received(receiver, theirs: list[Path]) -> Iterable[FileRead]:
    try:
        return pickle.loads(receiver.recv_bytes())
    except (EOFError, OSError):
        # The worker died (killed, out of memory): read its files here rather than lose them.
        log.warning("the JUnit reading worker died; reading its %d files in this process", len(theirs))
        return map(read_file, theirs)


def can_fork() -> bool:
    """Two cores to use, and a process that is safe to fork (Linux, no other thread holding a lock)."""
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return False
    return len(os.sched_getaffinity(0)) >= 2


def _read_all(files: list[Path], sender) -> None:
    sender.send_bytes(pickle.dumps([read_file(path) for path in files], protocol=pickle.HIGHEST_PROTOCOL))
    sender.close()
    # Out at once: the normal exit flushes the standard streams, whose locks a forked copy may
    # hold for a thread that does not exist in it (when a caller forced `parallel=True`).
    os._exit(0)


def _split(sizes: list[int]) -> int:
    """Where the worker's tail starts: as many last files as keep it within `_WORKER_SHARE`, at least one."""
    total, tail, split = sum(sizes), 0, len(sizes)
    while split > 1 and (tail + sizes[split - 1] <= _WORKER_SHARE * total or split == len(sizes)):
        split -= 1
        tail += sizes[split]
    return split


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # read_file reports it
