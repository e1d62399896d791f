"""One-off: rebuild the seed's skip dicts as multi-line Python and transcribe them to skiplist TOML.

The seed (upstream Transformers' tests/exporters/test_export.py as the project first received
it; its skip tables are kept in tests/data/upstream/test_export_skips.py) lost its newlines, so every `#` comment
runs into the code after it. Each comment inside the two dicts ends where the next comment or
the next `"scope": {` key begins; putting those back on their own lines gives valid Python,
which `bot.skiplist.importer` then reads through the AST like any other module.

    .venv/bin/python tools/transcribe_seed.py SEED [--fixture FILE] [--out skiplists/]
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import tokenize
from pathlib import Path

from bot.skiplist.importer import import_skiplist

REGIONS = {
    "EXPORT_SKIPS": ("EXPORT_SKIPS: dict", "# ──────────────────────────── ONNX optimization"),
    "ONNX_DISABLE_OPTIMIZE": ("ONNX_DISABLE_OPTIMIZE: dict", "# Parameterization for export tests"),
}
OUTPUTS = {"EXPORT_SKIPS": "export_skips.toml", "ONNX_DISABLE_OPTIMIZE": "onnx_disable_optimize.toml"}
# A comment ends before the next comment or before the scope key it documents.
_COMMENT = re.compile(r'#.*?(?= # | "[^"]+": \{)')


def region(seed: str, name: str) -> str:
    start, end = REGIONS[name]
    i = seed.index(start)
    return seed[i : seed.index(end, i)].strip()


def restore_lines(flat: str) -> str:
    """Put each comment back on a line of its own, then lay the literal out one item per line."""
    parts, pos = [], 0
    for match in _COMMENT.finditer(flat):
        if _inside_string(flat, match.start()):
            continue
        # A quote inside a removed comment would mean the cut is in the wrong place.
        assert '"' not in match.group(0), match.group(0)
        parts += [flat[pos : match.start()].rstrip(), "\n", match.group(0).rstrip(), "\n"]
        pos = match.end()
    parts.append(flat[pos:])
    return _layout("".join(parts))


def _inside_string(text: str, index: int) -> bool:
    # Reasons hold no escaped quotes (checked by the AST comparison in main), so parity suffices.
    return text.count('"', 0, index) % 2 == 1


def _layout(source: str) -> str:
    """Black-like layout: a line per key, per concatenated string piece, per comment."""
    layout = _Layout()
    prev = None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        layout.add(tok.type, tok.string, prev)
        prev = "STRING" if tok.type == tokenize.STRING else tok.string
    layout.newline()
    return "\n".join(layout.out) + "\n"


class _Layout:
    """The lines laid out so far, the line being built and the brackets open around it."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.stack: list[str] = []  # open brackets; only `{` and `(` of the literal break lines
        self.line = ""

    def newline(self) -> None:
        if self.line.strip():
            self.out.append(self.line.rstrip())
        self.line = "    " * sum(b in "{(" for b in self.stack)

    def add(self, kind: int, text: str, prev: str | None) -> None:
        """One token; `prev` is the previous token's text, or "STRING" after a string."""
        if kind == tokenize.COMMENT:
            self.newline()
            self.line += text
            self.newline()
        elif kind == tokenize.OP and text in "{([":
            self.open(text)
        elif kind == tokenize.OP and text in "})]":
            self.close(text, prev)
        elif kind == tokenize.OP and text == ",":
            self.comma()
        elif kind == tokenize.OP and text in ":=":
            self.line += ": " if text == ":" else " = "
        elif kind == tokenize.STRING and prev == "STRING":
            self.newline()
            self.line += text
        elif kind not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            self.line += text

    def open(self, text: str) -> None:
        self.line += text
        self.stack.append(text)
        if text != "[":
            self.newline()

    def close(self, text: str, prev: str | None) -> None:
        opened = self.stack.pop()
        if opened == "[":
            self.line += text
        elif prev == opened:  # an empty dict stays `{}`
            self.line = self.out.pop() + text
        else:
            self.newline()
            self.line += text

    def comma(self) -> None:
        self.line += ","
        if self.stack and self.stack[-1] != "[":
            self.newline()
        else:
            self.line += " "


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=Path)
    parser.add_argument("--fixture", type=Path, help="write the rebuilt multi-line Python module here")
    parser.add_argument("--out", type=Path, help="write the two TOML files into this folder")
    args = parser.parse_args()
    seed = args.seed.read_text(encoding="utf-8")
    modules = {name: restore_lines(region(seed, name)) for name in REGIONS}
    for name, module in modules.items():
        flat = _strip_comments(region(seed, name))
        # The rebuilt module must hold exactly the literal of the flat one.
        assert ast.dump(ast.parse(module)) == ast.dump(ast.parse(flat)), name
    if args.fixture:
        args.fixture.write_text("\n".join(modules.values()), encoding="utf-8")
    for name, module in modules.items():
        text = import_skiplist(module, name, f"{args.seed}:{name}")
        if args.out:
            (args.out / OUTPUTS[name]).write_text(text, encoding="utf-8")
        else:
            print(text)


def _strip_comments(flat: str) -> str:
    return _COMMENT.sub(lambda m: m.group(0) if _inside_string(flat, m.start()) else "", flat)


if __name__ == "__main__":
    main()
