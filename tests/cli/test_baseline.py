"""`export-bot baseline merge|show|due` from a real `python -m bot` process: what they write, and hostile input ending
in one `error:` line, exit 2, no partial file."""

from __future__ import annotations

import json
import os

import pytest

from bot.files import MAX_INPUT_BYTES
from tests.cli.test_bad_input import bot, one_error
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit

BERT = "BertModel::test_onnx_export_static"
A, B = "a" * 40, "b" * 40


@pytest.fixture
def two_pushes(tmp_path):
    """main@A passes BERT (a full sweep), main@B (pushed onto A) breaks it: merged by the CLI, as the workflow does."""
    good, bad = tmp_path / "good.xml", tmp_path / "bad.xml"
    good.write_text(junit([Case(BERT)]), encoding="utf-8")
    bad.write_text(junit([Case(BERT, status="failed", stage="export", message="UserError: data-dependent")]))
    first = bot(
        *("baseline", "merge", "--junit", good, "--commit", A, "--source", "sweep", "--full", "--run-id", "1"),
        *("--time", "2026-12-01T00:00:00Z", "--out", tmp_path / "state" / "baseline.json"),
    )
    assert first.returncode == 0, first.stderr
    second = bot(
        *("baseline", "merge", "--state", tmp_path / "state", "--junit", bad, "--commit", B, "--parent", A),
        *("--run-id", "2", "--time", "2026-12-02T00:00:00Z", "--due", "shared: src/transformers/modeling_utils.py"),
        *("--out", tmp_path / "next" / "baseline.json", "--measurement", tmp_path / "measurement.json"),
    )
    assert second.returncode == 0, second.stderr
    return tmp_path


def test_merge_show_and_due_on_two_pushes(two_pushes):
    state = json.loads((two_pushes / "next" / "baseline.json").read_text())
    assert [s["commits"] for s in state["segments"]] == [[A], [B]]
    assert json.loads((two_pushes / "measurement.json").read_text())["runs"] == [2]
    shown = bot(
        "baseline", "show", "--state", two_pushes / "next", "--now", "2026-12-03T00:00:00Z", "--skiplists", SKIPLISTS
    )
    assert shown.returncode == 0, shown.stderr
    assert "a chain of 2 commits, newest main@bbbbbbb" in shown.stdout
    assert f"{BERT}: passed at main@aaaaaaa, failing since main@bbbbbbb; culprit main@bbbbbbb" in shown.stdout
    as_json = bot("baseline", "show", "--state", two_pushes / "next", "--json", "--skiplists", SKIPLISTS)
    assert json.loads(as_json.stdout)["regressions"][0]["culprit"] == B
    output = two_pushes / "github_output"
    due = bot(
        "baseline", "due", "--state", two_pushes / "next", "--now", "2026-12-03T00:00:00Z", "--github-output", output
    )
    assert due.returncode == 0 and "modeling_utils.py (main@bbbbbbb)" in due.stdout
    assert output.read_text() == "sweep=true\n"
    quiet = bot("baseline", "due", "--state", two_pushes / "state", "--now", "2026-12-03T00:00:00Z")
    assert quiet.stdout.strip() == "no full sweep due"


def test_no_baseline_yet_makes_a_sweep_due_and_the_first_merge_starts_the_state(tmp_path):
    """`github baseline` found none and wrote nothing: the nightly sweep is due, and its merge starts anew."""
    result = bot("baseline", "due", "--state", tmp_path / "base", "--github-output", tmp_path / "out")
    assert result.returncode == 0 and "no baseline yet" in result.stdout
    assert (tmp_path / "out").read_text() == "sweep=true\n"
    (tmp_path / "empty").mkdir()
    assert "no full sweep yet" in bot("baseline", "due", "--state", tmp_path / "empty").stdout
    first = bot(
        "baseline", "merge", "--state", tmp_path / "base", "--commit", A, "--run-id", "3", "--out", tmp_path / "s.json"
    )
    assert first.returncode == 0 and "no baseline at" in first.stdout
    assert json.loads((tmp_path / "s.json").read_text())["segments"] == [{"parent": None, "commits": [A], "run_id": 3}]


def _hostile(tmp_path) -> dict:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200 + "]" * 200)
    deeper = tmp_path / "deeper.json"
    nested = "[" * 200 + "]" * 200
    deeper.write_text(f'{{"format": "export-bot-baseline", "version": 2, "cells": {{"{BERT}": {nested}}}}}')
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk used, refused by its size
    newer = tmp_path / "newer.json"
    newer.write_text('{"format": "export-bot-baseline", "version": 4}')
    return {"fifo": fifo, "deep": deep, "deeper": deeper, "huge": huge, "newer": newer}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fifo", "FIFO"),
        ("deep", "not an export-bot baseline"),
        ("deeper", "expected an object with at, status"),
        ("huge", "too large"),
        ("newer", "update the bot-ref or delete the artifact"),
    ],
)
@pytest.mark.parametrize("command", ["merge", "show", "due"])
def test_hostile_state_files_are_one_line_and_exit_2_and_write_nothing(tmp_path, name, expected, command):
    path = _hostile(tmp_path)[name]
    out = tmp_path / "out" / "baseline.json"
    extra = {"merge": ("--out", out), "show": ("--skiplists", SKIPLISTS), "due": ()}[command]
    result = bot("baseline", command, "--state", path, *extra)
    assert expected in one_error(result)
    assert not out.parent.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--commit", "abc123"), "--commit 'abc123': expected a commit SHA"),
        (("--commit", A, "--commits", f"{B},{A}", "--parent", "c" * 39), "--parent"),
        (("--commit", A, "--commits", f"{A},{B}"), "--commits must end with --commit"),
        (("--commit", A, "--time", "tuesday"), "--time 'tuesday'"),
        (("--full",), "--full needs --commit"),
        (("--measurement", "{tmp}/m.json"), "--measurement needs --commit"),
    ],
)
def test_bad_merge_options_are_one_line_and_exit_2_and_write_nothing(tmp_path, args, expected):
    args = [str(a).replace("{tmp}", str(tmp_path)) for a in args]
    result = bot("baseline", "merge", *args, "--out", tmp_path / "out.json")
    assert expected in one_error(result)
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "m.json").exists()


def test_a_base_folder_holding_baseline_json_reads_as_mains_newest_results(two_pushes, tmp_path):
    """`github baseline` writes only baseline.json: `diff`/`report --base DIR` judge against each cell's newest result."""
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(BERT)]), encoding="utf-8")
    result = bot("diff", "--base", two_pushes / "next", "--head", head, "--json", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["base_sha"] == B and [line["cell"] for line in report["categories"]["newly_passing"]] == [BERT]
