"""bot/footprints.py: functions named by line as the recorder names them, the testcase property, and its bounded reader."""

from __future__ import annotations

import base64
import zlib

import pytest

from bot import footprints
from bot.footprints import MODULE, FootprintError, decode, encode, spans, spelled

SOURCE = '''"""A module."""
import os

X = 1


@decorator
def top(a,
        b):
    """Doc."""
    def inner():
        return a

    return inner


class Layer:
    size = 3

    def forward(self):
        return lambda: 1

    class Nested:
        async def run(self):
            pass
'''


def test_lines_map_to_the_innermost_function_and_everything_else_to_module_level():
    by_line = spans(SOURCE)
    assert [by_line.at(n) for n in (1, 2, 4, 7, 8, 9, 10, 11, 12, 13)] == [
        MODULE,
        MODULE,
        MODULE,
        "top",  # a decorator line belongs to its function
        "top",
        "top",  # the signature's second line
        "top",
        "top.inner",
        "top.inner",
        "top",
    ]
    assert by_line.at(18) == MODULE  # a class attribute: the class body runs at import
    assert by_line.at(21) == "Layer.forward"  # the lambda is its parent's
    assert by_line.at(25) == "Layer.Nested.run"


def test_an_inserted_line_lands_in_the_function_holding_both_neighbours():
    by_line = spans(SOURCE)
    assert by_line.between(11) == "top.inner"
    assert by_line.between(13) == "top"
    # After inner's last line: inner or top; top, since every cell that ran inner ran top.
    assert by_line.between(12) == "top"
    assert by_line.between(21) == MODULE  # after forward's last line: a new method in the class body


def test_the_property_round_trips_compressed_and_spelled():
    functions = {"src/transformers/modeling_layers.py::<module>", "src/transformers/a.py::B.forward", "tests/t.py::f"}
    assert decode(encode(functions)) == functions
    assert decode(spelled(functions)) == functions
    assert spelled(functions) == (
        "src/transformers/a.py::B.forward;src/transformers/modeling_layers.py::<module>;tests/t.py::f"
    )
    assert len(encode(functions)) < 200
    assert decode("") == frozenset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("../etc/passwd.py::f", "not a checkout path"),
        ("/abs/x.py::f", "not a checkout path"),
        ("src/x.txt::f", "not a checkout path"),
        ("src/x.py", "not a checkout path"),
        ("src/x.py::f g", "not a qualified name"),
        ("src/x.py::" + "a" * 301, "not a qualified name"),
        ("src/x.py::f;" * (footprints.MAX_FILES + 1), "files"),
        ("x" * (footprints.MAX_PROPERTY + 1), "characters"),
        ("zlib:not base64!", "does not inflate"),
        ("zlib:" + base64.b64encode(b"not zlib").decode(), "does not inflate"),
        # A zip bomb: 20 MB of one letter inflates past the bound, and is refused before it is held.
        ("zlib:" + base64.b64encode(zlib.compress(b"a" * 20_000_000, 9)).decode(), "inflates past"),
    ],
)
def test_a_hostile_property_is_refused_with_what_is_wrong(text, expected):
    with pytest.raises(FootprintError, match=expected):
        decode(text)


def test_too_many_functions_are_refused():
    names = ",".join(f"f{i}" for i in range(footprints.MAX_FUNCTIONS + 1))
    with pytest.raises(FootprintError, match="functions"):
        decode(f"src/x.py::{names}")


def test_tables_share_groups_and_read_back_checked():
    cells = {
        "BertModel::test_dynamo_export_static": (frozenset({"src/a.py::f", "src/a.py::g", "src/b.py::h"}), 0),
        "BertModel::test_onnx_export_static": (frozenset({"src/a.py::f", "src/a.py::g", "src/c.py::k"}), 1),
    }
    document = footprints.tables(cells)
    assert document["functions"] == {"src/a.py": ["f", "g"], "src/b.py": ["h"], "src/c.py": ["k"]}  # numbered 0 to 3
    assert [document["groups"][i] for i in document["shared_groups"]] == [[0, 1]]  # a.py's set, stored once
    assert footprints.read_tables(document, 2) == {cell: (at, functions) for cell, (functions, at) in cells.items()}
    for broken, expected in [
        ({**document, "groups": [[0, 99]]}, "groups\\[0\\]: expected indices"),
        ({**document, "functions": {"../x.py": ["f"]}}, "not a checkout path"),
        ({**document, "functions": {"src/a.py": ["f(g)"]}}, "not a qualified name"),
        ({**document, "footprints": {"BertModel::test_dynamo_export_static": {"at": 5, "groups": []}}}, "`at`"),
        ({**document, "shared_groups": "0"}, "shared_groups"),
    ]:
        with pytest.raises(FootprintError, match=expected):
            footprints.read_tables(broken, 2)
