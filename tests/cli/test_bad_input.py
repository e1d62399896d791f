"""Hostile command-line input, from a real `python -m bot` process: a FIFO, `/dev/zero`, a deep literal, a
zero chunk, an unknown cell and an unwritable output each end in one `error:` line, exit 2, and no partial file.

Each command runs with a timeout, so a command that would hang fails its test instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SKIPLISTS
from tests.results.factory import Case, junit

CELL = "BertModel::test_onnx_export_static"
SHA = "a" * 40
# GitHub commands refuse their input before any request: the API address is one nothing answers at.
GITHUB = ("github", "--repo", "o/r", "--token", "t", "--api-url", "http://127.0.0.1:9")
TIMEOUT = 120  # seconds: far above any of these commands' real time, far below a hung job's


def bot(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GITHUB_REPOSITORY", None)
    command = [sys.executable, "-m", "bot", *map(str, args)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False)


def one_error(result: subprocess.CompletedProcess) -> str:
    """The one `error:` line of a run that exited 2 without a traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith(("error: ", "Error: "))]
    assert len(errors) == 1, result.stderr[-2000:]
    return errors[0]


@pytest.fixture
def files(tmp_path):
    """A FIFO, a good head JUnit and a good report, side by side."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(CELL)]), encoding="utf-8")
    report = tmp_path / "report.json"
    result = bot("diff", "--head", head, "--json", report, "--skiplists", SKIPLISTS)
    assert result.returncode == 0, result.stderr
    return fifo, head, report


# Every command that reads a file, given a FIFO in that file's place (`{fifo}`), `{head}` a good JUnit.
FIFO_CASES = [
    ("diff", "--head", "{fifo}"),
    ("diff", "--head", "{head}", "--base", "{fifo}"),
    ("diff", "--head", "{head}", "--rerun", "{fifo}"),
    ("diff", "--head", "{head}", "--selection", "{fifo}"),
    ("report", "--head", "{fifo}", "--out", "{tmp}/out"),
    ("report", "--head", "{head}", "--selection", "{fifo}", "--out", "{tmp}/out"),
    ("propose", "--report", "{fifo}"),
    ("propose", "--report", "{report}", "--history", "{fifo}"),
    ("run", "--selection", "{fifo}", "--junit", "{tmp}/j.xml"),
    ("run", "--rerun-of", "{fifo}", "--junit", "{tmp}/j.xml"),
    ("run", "--models", "BertModel", "--shard", "1/2", "--durations", "{fifo}", "--junit", "{tmp}/j.xml"),
    ("check", "--models", "BertModel", "--base-junit", "{fifo}", "--out", "{tmp}/out"),
    ("check", "--models", "BertModel", "--config", "{fifo}", "--out", "{tmp}/out"),
    ("select", "--repo", "{repo}", "--base", "HEAD", "--head", "HEAD", "--config", "{fifo}"),
    ("skiplist", "lint", "{fifo}"),
    ("skiplist", "import", "{fifo}"),
    ("site", "--reports", "{fifo}", "--out", "{tmp}/site"),
    ("zoo", "coverage", "--classes", "BertModel", "--results", "{fifo}"),
    # Main's baseline: every command that reads a state, a JUnit or a report beside it.
    ("baseline", "merge", "--state", "{fifo}", "--out", "{tmp}/state.json"),
    ("baseline", "merge", "--state", "{state}", "--junit", "{fifo}", "--commit", SHA, "--out", "{tmp}/state.json"),
    ("baseline", "merge", "--junit", "{head}", "--rerun", "{fifo}", "--commit", SHA, "--out", "{tmp}/state.json"),
    ("baseline", "show", "--state", "{fifo}"),
    ("baseline", "due", "--state", "{fifo}"),
    ("bisect", "--repo", "{repo}", "--state", "{fifo}", "--skiplists", str(SKIPLISTS), "--out", "{tmp}/b.json"),
    (*GITHUB, "track", "--state", "{fifo}", "--skiplists", str(SKIPLISTS)),
    # The event payload (GITHUB_EVENT_PATH) of every job that reads one.
    (*GITHUB, "--event", "{fifo}", "comment", "--report", "{report}"),
    (*GITHUB, "track", "--state", "{state}", "--skiplists", str(SKIPLISTS), "--report", "{fifo}"),
    ("report", "--head", "{head}", "--base", "{fifo}", "--merge-base", SHA, "--out", "{tmp}/out"),
    # A base folder whose baseline.json is a FIFO: refused, never read as "no base" (every cell new).
    ("report", "--head", "{head}", "--base", "{fifo_base}", "--merge-base", SHA, "--out", "{tmp}/out"),
]


@pytest.mark.parametrize("args", FIFO_CASES, ids=[" ".join(a) for a in FIFO_CASES])
def test_a_fifo_as_an_input_file_is_refused_at_once(files, tmp_path, repo, args):
    fifo, head, report = files
    state = tmp_path / "main" / "baseline.json"
    one = bot("baseline", "merge", "--junit", head, "--commit", SHA, "--source", "sweep", "--out", state)
    assert one.returncode == 0, one.stderr
    fifo_base = tmp_path / "fifo-base"
    fifo_base.mkdir()
    os.mkfifo(fifo_base / "baseline.json")
    values = dict(fifo=fifo, head=head, report=report, tmp=tmp_path, state=state, fifo_base=fifo_base, repo=repo)
    before = set(tmp_path.rglob("*"))
    skiplists = ("--skiplists", SKIPLISTS) if args[0] in ("diff", "report", "propose", "run", "check") else ()
    line = one_error(bot(*(a.format(**values) for a in args), *skiplists))
    expected = "not a regular file (a FIFO, which would block"
    named = fifo_base / "baseline.json" if "{fifo_base}" in args else fifo
    assert f"{named}" in line and expected in line, line
    assert set(tmp_path.rglob("*")) - before <= {tmp_path / "out"}, "a refused command wrote files"


@pytest.mark.parametrize(
    "args",
    [
        ("diff", "--head", "/dev/zero"),
        ("propose", "--report", "/dev/zero"),
        ("skiplist", "lint", "/dev/zero"),
        ("run", "--selection", "/dev/zero", "--junit", "{tmp}/j.xml"),
    ],
)
def test_dev_zero_is_refused_without_reading_it(tmp_path, repo, args):
    line = one_error(bot(*(a.format(tmp=tmp_path, repo=repo) for a in args)))
    assert "/dev/zero" in line and "not a regular file (a device)" in line


@pytest.mark.parametrize(
    "args",
    [
        ("baseline", "due", "--state", "{tmp}/none.json", "--github-output", "{fifo}"),
        ("select", "--repo", "{repo}", "--base", "HEAD", "--head", "HEAD", "--github-output", "{fifo}"),
        (*GITHUB, "merge-base", "--base", "main", "--head", SHA, "--github-output", "{fifo}"),
    ],
    ids=["baseline due", "select", "github merge-base"],
)
def test_a_fifo_as_the_github_output_is_refused_not_waited_on(tmp_path, repo, args):
    """$GITHUB_OUTPUT is appended to: a FIFO nothing reads would block the open forever."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    line = one_error(bot(*(a.format(tmp=tmp_path, fifo=fifo, repo=repo) for a in args)))
    assert f"{fifo}: not a regular file (a FIFO" in line, line  # before any request, GitHub's too


def test_a_pipe_someone_reads_is_still_a_github_output(tmp_path):
    result = subprocess.run(
        f"{sys.executable} -m bot baseline due --state {tmp_path}/none.json --github-output /dev/stdout | cat",
        shell=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert "sweep=true" in result.stdout, result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("baseline", "show", "--state", "{deep}"),
        ("baseline", "due", "--state", "{deep}"),
        ("baseline", "merge", "--state", "{deep}", "--out", "{tmp}/out.json"),
        ("bisect", "--repo", "{repo}", "--state", "{deep}", "--skiplists", str(SKIPLISTS), "--out", "{tmp}/out.json"),
        (*GITHUB, "track", "--state", "{deep}", "--skiplists", str(SKIPLISTS)),
        ("report", "--head", "{deep_head}", "--base", "{deep_base}", "--merge-base", SHA, "--out", "{tmp}/out"),
    ],
    ids=["show", "due", "merge", "bisect", "track", "report --merge-base"],
)
def test_a_deeply_nested_baseline_is_one_line(tmp_path, repo, args):
    deep = tmp_path / "deep" / "baseline.json"
    deep.parent.mkdir()
    deep.write_text('{"format": "export-bot-baseline", "version": 2, "cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(CELL)]), encoding="utf-8")
    values = dict(deep=deep, deep_base=deep.parent, deep_head=head, tmp=tmp_path, repo=repo)
    skiplists = ("--skiplists", SKIPLISTS) if args[0] == "report" else ()
    line = one_error(bot(*(a.format(**values) for a in args), *skiplists))
    assert f"{deep}: JSON nested deeper than the parser follows" in line, line
    assert not list(tmp_path.glob("out*"))


@pytest.mark.parametrize(
    "args",
    [
        ("baseline", "show", "--state", "/dev/zero"),
        ("baseline", "merge", "--state", "/dev/zero", "--out", "{tmp}/out.json"),
        ("bisect", "--repo", "{repo}", "--state", "/dev/zero", "--skiplists", str(SKIPLISTS), "--out", "{tmp}/o.json"),
        (*GITHUB, "track", "--state", "/dev/zero", "--skiplists", str(SKIPLISTS)),
    ],
    ids=["show", "merge", "bisect", "track"],
)
def test_dev_zero_as_a_baseline_is_refused_without_reading_it(tmp_path, repo, args):
    line = one_error(bot(*(a.format(tmp=tmp_path, repo=repo) for a in args)))
    assert "/dev/zero" in line and "not a regular file (a device)" in line
    assert not list(tmp_path.iterdir())


def test_a_folder_as_the_base_folders_baseline_is_refused(tmp_path):
    """A base folder's baseline.json that is a folder is an error, not "no base" (a verdict on no base)."""
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(CELL)]), encoding="utf-8")
    (tmp_path / "base" / "baseline.json").mkdir(parents=True)
    out = tmp_path / "out"
    line = one_error(bot("report", "--head", head, "--base", tmp_path / "base", "--out", out, "--skiplists", SKIPLISTS))
    assert "baseline.json: Is a directory" in line, line
    assert not out.exists()


def test_a_deeply_nested_literal_in_skiplist_import_is_one_line(tmp_path):
    source = tmp_path / "deep.py"
    source.write_text('EXPORT_SKIPS = {"all": {"A": ' + '{"a": ' * 180 + "1" + "}" * 182 + "\n")
    line = one_error(bot("skiplist", "import", source, "--name", "EXPORT_SKIPS", "-o", tmp_path / "out.toml"))
    assert "must be a string literal, not a nested dict literal" in line
    assert not (tmp_path / "out.toml").exists()


def test_zoo_coverage_refuses_a_chunk_of_zero(tmp_path):
    line = one_error(bot("zoo", "coverage", "--chunk", "0", "--results", tmp_path / "r.jsonl"))
    assert "--chunk" in line
    assert not (tmp_path / "r.jsonl").exists()


def test_run_refuses_a_cell_of_a_class_the_source_lacks(tmp_path):
    junit_path = tmp_path / "j.xml"
    line = one_error(bot("run", "--cells", "Unknown::test_onnx_export_static", "--junit", junit_path, "-n", "0"))
    assert "--cells Unknown::test_onnx_export_static: the model source zoo has no class Unknown" in line
    assert not junit_path.exists()


@pytest.mark.parametrize("command", ["diff", "report"])
def test_an_unwritable_summary_leaves_no_report_behind(files, tmp_path, command):
    fifo, head, report = files
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way of the summary's folder")
    out = tmp_path / "out"
    outputs = ["--json", out / "report.json", "--markdown", out / "comment.md"] if command == "diff" else ["--out", out]
    result = bot(command, "--head", head, *outputs, "--summary", blocker / "summary.md", "--skiplists", SKIPLISTS)
    assert str(blocker) in one_error(result)
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


def test_a_good_diff_still_writes_every_file(files, tmp_path):
    fifo, head, report = files
    out = tmp_path / "good"
    args = ["--json", out / "report.json", "--markdown", out / "comment.md", "--summary", out / "summary.md"]
    result = bot("diff", "--head", head, *args, "--skiplists", SKIPLISTS)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["comment.md", "report.json", "summary.md"]
    assert json.loads((out / "report.json").read_text())["verdict"] == "success"
