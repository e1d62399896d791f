"""tomllib, or its backport on Python 3.10: the fast read-only TOML parser (tomlkit edits, this reads)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, loads
else:  # pragma: no cover - exercised by the Python 3.10 job
    from tomli import TOMLDecodeError, loads

__all__ = ["TOMLDecodeError", "loads"]
