"""The AST importer: a Python skip dict becomes skiplist TOML without the module ever running."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot import toml as tomllib
from bot.skiplist.importer import SkiplistImportError, import_skiplist, read_skip_dict
from tests.conftest import ROOT, SKIPLISTS

SEED = ROOT.parent / "shared" / "seeds" / "000_af50b47350963553.txt"

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


@pytest.mark.skipif(not SEED.is_file(), reason="the seed lives beside the repository, in ../shared/seeds")
def test_the_one_off_transcription_of_the_newline_less_seed_reproduces_the_shipped_files(tmp_path):
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "transcribe_seed.py"),
            str(SEED),
            "--out",
            str(tmp_path),
            "--fixture",
            str(tmp_path / "seed.py"),
        ],
        check=True,
        cwd=ROOT,
    )
    for name in ("export_skips.toml", "onnx_disable_optimize.toml"):
        assert (tmp_path / name).read_bytes() == (SKIPLISTS / name).read_bytes()
    assert (tmp_path / "seed.py").read_bytes() == (ROOT / "tests" / "skiplist" / "data" / "seed_skips.py").read_bytes()


def test_shipped_files_hold_every_seed_entry_verbatim():
    module = (Path(__file__).parent / "data" / "seed_skips.py").read_text(encoding="utf-8")
    for name, toml, entries, scopes in (
        ("EXPORT_SKIPS", "export_skips.toml", 173, 17),
        ("ONNX_DISABLE_OPTIMIZE", "onnx_disable_optimize.toml", 46, 2),
    ):
        expected = {s.name: dict(s.entries) for s in read_skip_dict(module, name)}
        shipped = tomllib.loads((SKIPLISTS / toml).read_text(encoding="utf-8"))
        assert shipped == expected and list(shipped) == list(expected)
        assert all(list(shipped[s]) == list(expected[s]) for s in expected)
        assert (sum(map(len, shipped.values())), len(shipped)) == (entries, scopes)
