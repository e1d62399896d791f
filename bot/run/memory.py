"""A cell's own peak memory: the worker's resident high-water mark, reset before the cell and read after.

A worker runs cells one after another, so its lifetime peak (`getrusage`) is only a ceiling on a
cell's. Linux lets a process reset its own high-water mark (`5` written to `/proc/self/clear_refs`,
since Linux 4.0) and reports it as `VmHWM` in `/proc/self/status`. Where either is missing (macOS,
Windows, a read-only /proc), the cell records no peak of its own.
"""

from __future__ import annotations

from pathlib import Path

CLEAR_REFS = Path("/proc/self/clear_refs")
STATUS = Path("/proc/self/status")


def reset_peak() -> bool:
    """Start this process's resident high-water mark afresh; False where the system cannot."""
    try:
        CLEAR_REFS.write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def peak_bytes() -> float | None:
    """The resident high-water mark since the last reset (`VmHWM`), in bytes; None where it cannot be read."""
    try:
        text = STATUS.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            words = line.split()
            if len(words) >= 2 and words[1].isdigit():
                return float(words[1]) * 1024  # kB
    return None
