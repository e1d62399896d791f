"""The AST importer: a Python skip dict becomes skiplist TOML without the module ever running."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from bot import toml as tomllib
from bot.skiplist.importer import SkiplistImportError, import_skiplist, read_skip_dict
from tests.conftest import ROOT, SKIPLISTS

# The repository's own copy of the upstream skip tables, with their license header (never run).
UPSTREAM = ROOT / "tests" / "data" / "upstream" / "test_export_skips.py"

MODULE = """
import os  # never executed: the import below would fail if it were
import does_not_exist

SKIPS: dict[str, dict[str, str]] = {
    # Every backend, every variant.
    "all": {
        "AModel": (
            "First piece, "
            "second piece with a \\"quote\\" and a backslash \\\\."
        ),
        "BModel": "Same as `AModel`.",  # trailing comments are not scope comments
    },
    # Two comment lines
    #   keep their indentation.
    "onnx.dynamic": {},
    "dynamic": {"CModel": ("parenthesised")},
}
OTHER = {"all": {"DModel": "x" "y"}}
"""


def test_reads_concatenation_parentheses_comments_and_empty_scopes():
    scopes = read_skip_dict(MODULE, "SKIPS")
    assert [(s.name, s.comments) for s in scopes] == [
        ("all", (" Every backend, every variant.",)),
        ("onnx.dynamic", (" Two comment lines", "   keep their indentation.")),
        ("dynamic", ()),
    ]
    assert scopes[0].entries[0] == ("AModel", 'First piece, second piece with a "quote" and a backslash \\.')
    text = import_skiplist(MODULE, "SKIPS")
    assert text.startswith("# Every backend, every variant.\n[all]\n")
    assert (
        '# Two comment lines\n#   keep their indentation.\n["onnx.dynamic"]\n\n[dynamic]\nCModel = "parenthesised"\n'
        in text
    )
    assert tomllib.loads(text)["all"]["AModel"] == scopes[0].entries[0][1]
    assert tomllib.loads(import_skiplist(MODULE, "OTHER")) == {"all": {"DModel": "xy"}}


@pytest.mark.parametrize(
    "source, message",
    [
        ("X = [1]\n", "X is not a dict literal"),
        ("X = {'all': ['A']}\n", "scope 'all' is not a dict literal"),
        ("X = {'all': {'A': 1}}\n", "must be a string literal, not `1`"),
        ("X = {'all': {**other}}\n", "`**` spread"),
        ("X = {\n", "not valid Python"),
        ("Y = {}\n", "no module-level assignment to 'X'"),
        ("X = {'all': {'A': 'x',\n  'A': 'y'}}\n", "m.py:2:3: duplicate model class 'A' in 'all' (first at line 1)"),
        ("X = {'all': {},\n 'dynamic': {},\n 'all': {}}\n", "m.py:3:2: duplicate scope 'all' of X (first at line 1)"),
        ("X = {'all': {'A': 'x'}, 'onnx': {'A': 'x'}}\n", None),  # one class in two scopes is fine
    ],
)
def test_shapes_it_refuses(source, message):
    if message is None:
        read_skip_dict(source, "X", "m.py")
        return
    with pytest.raises(SkiplistImportError, match=re.escape(message)):
        read_skip_dict(source, "X", "m.py")


def _tables() -> str:
    """The copy's two tables, below its license header."""
    text = UPSTREAM.read_text(encoding="utf-8")
    return text[text.index("EXPORT_SKIPS:") :]


def _flat_seed(tables: str) -> str:
    """The tables as the seed held them, every run of whitespace one space, with the comments that end each."""
    export, onnx = tables.split("ONNX_DISABLE_OPTIMIZE:")
    return (
        " ".join(export.split())
        + " # ──────────────────────────── ONNX optimization toggles ──────────────────────────── "
        + " ".join(("ONNX_DISABLE_OPTIMIZE:" + onnx).split())
        + " # Parameterization for export tests"
    )


def test_the_one_off_transcription_of_the_newline_less_seed_reproduces_the_shipped_files(tmp_path):
    seed = tmp_path / "seed.txt"
    seed.write_text(_flat_seed(_tables()), encoding="utf-8")
    command = [sys.executable, str(ROOT / "tools" / "transcribe_seed.py"), str(seed), "--out", str(tmp_path)]
    subprocess.run([*command, "--fixture", str(tmp_path / "seed.py")], check=True, cwd=ROOT)
    for name in ("export_skips.toml", "onnx_disable_optimize.toml"):
        assert (tmp_path / name).read_bytes() == (SKIPLISTS / name).read_bytes()
    assert (tmp_path / "seed.py").read_text(encoding="utf-8") == _tables()


def test_shipped_files_hold_every_seed_entry_verbatim():
    module = UPSTREAM.read_text(encoding="utf-8")
    for name, toml, entries, scopes in (
        ("EXPORT_SKIPS", "export_skips.toml", 173, 17),
        ("ONNX_DISABLE_OPTIMIZE", "onnx_disable_optimize.toml", 46, 2),
    ):
        expected = {s.name: dict(s.entries) for s in read_skip_dict(module, name)}
        shipped = tomllib.loads((SKIPLISTS / toml).read_text(encoding="utf-8"))
        assert shipped == expected and list(shipped) == list(expected)
        assert all(list(shipped[s]) == list(expected[s]) for s in expected)
        assert (sum(map(len, shipped.values())), len(shipped)) == (entries, scopes)
