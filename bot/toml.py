"""tomllib, or its backport on Python 3.10: the fast read-only TOML parser (tomlkit edits, this reads)."""

from __future__ import annotations

import sys
from typing import Any

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError
    from tomllib import loads as _loads
else:  # pragma: no cover - exercised by the Python 3.10 job
    from tomli import TOMLDecodeError
    from tomli import loads as _loads

__all__ = ["TOMLDecodeError", "loads"]


class _TooDeep(TOMLDecodeError):
    def __init__(self) -> None:
        # ValueError's own constructor: TOMLDecodeError's differs between Python versions.
        ValueError.__init__(self, "arrays or tables nested too deeply (at line 1, column 1)")


def loads(text: str) -> dict[str, Any]:
    """Parse TOML; text nested deeper than the parser's recursion is a TOMLDecodeError like any other."""
    try:
        return _loads(text)
    except RecursionError:
        raise _TooDeep() from None
