"""Style-preserving edits of skiplist TOML files; the only module that imports tomlkit."""

from __future__ import annotations

import tomlkit


def format_header(scope: str) -> str:
    """`[all]`, `["onnx.dynamic"]`: a scope's table header, quoted when the name has a dot."""
    return f"[{tomlkit.key(scope).as_string()}]"


def format_entry(model_class: str, reason: str) -> str:
    """`ModelClass = "reason"` on one line, escaped as a TOML basic string."""
    return f"{tomlkit.key(model_class).as_string()} = {tomlkit.string(reason).as_string()}"
