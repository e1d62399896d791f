"""Every command that reads a report.json answers a malformed one with exit 2 and one line naming the field; never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.conftest import SKIPLISTS
from tests.report.hostile import CELL, hostile_document


def _with(path: tuple, value) -> dict:
    document = hostile_document("x")
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return document


GROUP = ("groups", 0)
# (what is wrong, the document) → the field the one line must name.
MALFORMED = {
    "backend seconds not an object": (_with(("backend_seconds",), [1]), "backend_seconds"),
    "backend seconds name": (_with(("backend_seconds",), {"<img src=x>": 1}), "backend_seconds.<img src=x>"),
    "backend seconds number": (_with(("backend_seconds",), {"onnx": -1}), "backend_seconds.onnx"),
    "backend seconds too many": (_with(("backend_seconds",), {f"b{i}": 1 for i in range(65)}), "backend_seconds"),
    "counts key": (_with(("counts",), {"backend9/shape": {"failed": 1}}), "counts.backend9/shape"),
    "counts not an object": (_with(("counts",), [1, 2]), "counts"),
    "counts row not an object": (_with(("counts",), {"onnx/static": 3}), "counts.onnx/static"),
    "counts status": (_with(("counts",), {"onnx/static": {"boom": 1}}), "counts.onnx/static.boom"),
    "counts number": (_with(("counts",), {"onnx/static": {"failed": "1"}}), "counts.onnx/static.failed"),
    "groups not a list": (_with(("groups",), {"a": 1}), "groups"),
    "group not an object": (_with(("groups",), ["x"]), "groups[0]"),
    "group without signature": (_with(GROUP, {"stage": "export", "cells": [CELL]}), "groups[0].signature"),
    "group cells": (_with((*GROUP, "cells"), [CELL, 3]), "groups[0].cells[1]"),
    # Empty and degenerate values: an empty object lacks its keys, an empty list names no representative.
    "group empty object": (_with(GROUP, {}), "groups[0].signature"),
    "group cells empty": (_with((*GROUP, "cells"), []), "groups[0].cells"),
    "culprit empty object": (_with((*GROUP, "culprit"), {}), "groups[0].culprit.path"),
    "hint empty object": (_with((*GROUP, "hint"), {}), "groups[0].hint.id"),
    "group cells not a list": (_with((*GROUP, "cells"), CELL), "groups[0].cells"),
    "culprit line": (_with((*GROUP, "culprit", "line"), "12"), "groups[0].culprit.line"),
    "culprit without path": (_with((*GROUP, "culprit"), {"line": 1}), "groups[0].culprit.path"),
    "culprit url": (_with((*GROUP, "culprit", "url"), 5), "groups[0].culprit.url"),
    "hint not an object": (_with((*GROUP, "hint"), "h"), "groups[0].hint"),
    "hint without id": (_with((*GROUP, "hint"), {"text": "t"}), "groups[0].hint.id"),
    "category line": (_with(("categories", "newly_broken"), [7]), "categories.newly_broken[0]"),
    "category not a list": (_with(("categories", "newly_broken"), {}), "categories.newly_broken"),
    "head sha": (_with(("head_sha",), "<b>@x</b>"), "head_sha"),
    "repository url": (_with(("repository_url",), "javascript:alert(1)"), "repository_url"),
    "huge headline": (_with(("headline",), "x" * 200_000), "headline"),
    "versions": (_with(("versions",), {"torch": 2}), "versions.torch"),
    "families": (_with(("families",), ["a"]), "families"),
    "setup problem": (_with(("setup_problems",), [{"modules": "m"}]), "setup_problems[0].modules"),
    "proposal": (_with(("proposal",), 5), "proposal"),
    "problems": (_with(("problems",), [{"line": "3"}]), "problems[0].line"),
    "needs rerun": (_with(("needs_rerun",), ["not a cell"]), "needs_rerun[0]"),
}


def _commands(path: Path, tmp_path: Path) -> dict[str, list[str]]:
    """Each command that loads a report, pointed at `path`."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(hostile_document("x")), encoding="utf-8")
    return {
        "propose": ["propose", "--report", str(path), "--skiplists", str(SKIPLISTS)],
        "propose --history": ["propose", "--report", str(good), "--history", str(path), "--skiplists", str(SKIPLISTS)],
        "github comment": ["github", "comment", "--report", str(path), "--pr", "1"],
        # The nightly job's: the report is read before anything is asked of GitHub (nothing listens there).
        "github obsolete-skips": ["github", "--repo", "o/r", "--token", "t", "--api-url", "http://127.0.0.1:9"]
        + ["obsolete-skips", "--report", str(path), "--skiplists", str(SKIPLISTS)],
        "run --rerun-of": ["run", "--rerun-of", str(path), "--junit", str(tmp_path / "junit.xml")],
        "site": ["site", "--reports", str(path), "--out", str(tmp_path / "site")],
    }


def _assert_one_line_exit_2(result, field: str | None) -> None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback: {result.output!r}") from result.exception
    assert result.exit_code == 2, result.output
    # One line: ours (`error: `), or click's usage error for a path it checks itself (`Error: `).
    said = [line for line in result.stderr.splitlines() if line.startswith(("error: ", "Error: "))]
    assert len(said) == 1, result.stderr
    if field is not None:
        assert said[0].startswith("error: ") and f"field `{field}`" in said[0], said[0]


def _invoke(argv: list[str], tmp_path: Path):
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "out.txt")}
    return CliRunner().invoke(main, argv, env=env)


@pytest.mark.parametrize("case", MALFORMED, ids=list(MALFORMED))
def test_each_command_refuses_a_malformed_report_in_one_line(tmp_path, case):
    document, field = MALFORMED[case]
    path = tmp_path / "report.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    for name, argv in _commands(path, tmp_path).items():
        result = _invoke(argv, tmp_path)
        try:
            _assert_one_line_exit_2(result, field)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.mark.parametrize("shape", ["not json", "a list", "binary", "deep", "a folder", "missing", "a fifo"])
def test_each_command_refuses_a_file_that_is_no_report_in_one_line(tmp_path, shape):
    path = tmp_path / "report.json"
    if shape == "not json":
        path.write_text("{", encoding="utf-8")
    elif shape == "a list":
        path.write_text("[]", encoding="utf-8")
    elif shape == "binary":
        path.write_bytes(b"\xff\xfe\x00")
    elif shape == "deep":
        path.write_text('{"a":' * 100_000, encoding="utf-8")
    elif shape == "a folder":
        path.mkdir()
    elif shape == "a fifo":
        os.mkfifo(path)  # reading it would block forever
    for name, argv in _commands(path, tmp_path).items():
        if name == "site" and shape in ("a folder", "missing"):
            continue  # `site --reports` takes folders, and says so for a missing one (tests/site)
        result = _invoke(argv, tmp_path)
        try:
            _assert_one_line_exit_2(result, None)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
