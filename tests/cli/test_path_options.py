"""Every path option of every command, found in the click tree, given what is not a file it can use: a FIFO,
a device, a dangling symlink, a folder. Each ends at once in exit 2 and one line naming the path.

A new command or option is covered without a new line here: an input by default, an output once
it is named in OUTPUTS; a new command needs its one good invocation in GOOD.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit

SHA = "a" * 40
CELL = "BertModel::test_onnx_export_static"
GITHUB = ("github", "--repo", "o/r", "--token", "t", "--api-url", "http://127.0.0.1:9")
SECONDS = 15  # far above a refusal's time, far below a hang


def _leaves(command: click.Command, path: tuple[str, ...], ctx: click.Context):
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            yield from _leaves(command.get_command(ctx, name), (*path, name), ctx)
    else:
        yield path, command


def _path_options() -> list[tuple[tuple[str, ...], click.Parameter]]:
    ctx = click.Context(main)
    return [
        (path, param)
        for path, command in _leaves(main, (), ctx)
        for param in command.params
        if isinstance(param.type, click.Path)
    ]


# A good invocation of each command (`{…}` filled in by `_values`); the option under test is added
# to it, or replaces its value. Commands that reach GitHub refuse their input before any request.
GOOD = {
    ("baseline", "due"): ["--state", "{state}"],
    ("baseline", "merge"): ["--junit", "{head}", "--commit", SHA, "--source", "sweep", "--out", "{tmp}/m.json"],
    ("baseline", "show"): ["--state", "{state}"],
    ("bisect",): ["--repo", "{repo}", "--state", "{state}", "--skiplists", "{skiplists}", "--out", "{tmp}/b.json"],
    ("check",): ["--models", "BertModel", "--out", "{tmp}/out"],
    ("diff",): ["--head", "{head}", "--skiplists", "{skiplists}"],
    ("github", "comment"): ["--report", "{report}"],
    ("github", "obsolete-skips"): ["--report", "{report}", "--skiplists", "{skiplists}"],
    ("github", "track"): ["--state", "{state}", "--skiplists", "{skiplists}", "--report", "{report}"],
    ("github", "merge-base"): ["--base", "main", "--head", SHA],
    ("github", "command"): [],
    ("github", "baseline"): [],
    ("github", "reports"): [],
    ("github", "sweep"): ["--state", "{state}"],
    ("propose",): ["--report", "{report}", "--skiplists", "{skiplists}"],
    ("report",): ["--head", "{head}", "--out", "{tmp}/out", "--skiplists", "{skiplists}"],
    ("run",): ["--cells", CELL, "-n", "0", "--junit", "{tmp}/j.xml"],
    ("select",): ["--repo", "{repo}", "--base", "HEAD", "--head", "HEAD"],
    ("site",): ["--reports", "{report}", "--out", "{tmp}/site"],
    ("skiplist", "check-tables"): ["--checkout", "{repo}", "--skiplists", "{skiplists}"],
    ("skiplist", "explain"): [CELL],
    ("skiplist", "import"): ["{py}", "--name", "EXPORT_SKIPS", "-o", "{tmp}/i.toml"],
    ("skiplist", "lint"): ["{skiplists}"],
    ("zoo", "coverage"): ["--classes", "BertModel", "--results", "{tmp}/r.jsonl"],
}

# What a command writes; every other path option is read.
OUTPUTS = {
    ("baseline", "due", "--github-output"),
    ("baseline", "merge", "--out"),
    ("baseline", "merge", "--measurement"),
    ("bisect", "--out"),
    ("bisect", "--work"),
    ("check", "--out"),
    ("diff", "--json"),
    ("diff", "--markdown"),
    ("diff", "--summary"),
    ("github", "baseline", "--out"),
    ("github", "command", "--out"),
    ("github", "merge-base", "--github-output"),
    ("github", "reports", "--out"),
    ("report", "--out"),
    ("report", "--summary"),
    ("run", "--junit"),
    ("select", "--json"),
    ("select", "--github-output"),
    ("site", "--out"),
    ("skiplist", "import", "--output"),
    ("zoo", "coverage", "--results"),
    ("zoo", "coverage", "--json"),
    ("zoo", "coverage", "--summary"),
}

OPTIONS = _path_options()


def _id(path, param) -> str:
    return " ".join((*path, param.opts[-1] if param.opts[-1].startswith("-") else param.name))


def test_every_command_with_a_path_option_has_a_good_invocation():
    assert {path for path, _ in OPTIONS} <= set(GOOD)
    named = {(*path, param.opts[-1]) for path, param in OPTIONS}
    assert OUTPUTS <= named, OUTPUTS - named


@pytest.fixture
def values(tmp_path, repo) -> dict:
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(CELL)]), encoding="utf-8")
    report, state = tmp_path / "report.json", tmp_path / "main" / "baseline.json"
    assert _invoke(["diff", "--head", str(head), "--json", str(report), "--skiplists", str(SKIPLISTS)]).exit_code == 0
    assert _invoke(["baseline", "merge", "--junit", str(head), "--commit", SHA, "--out", str(state)]).exit_code == 0
    py = tmp_path / "skips.py"
    py.write_text('EXPORT_SKIPS = {"all": {"BertModel": "why"}}\n', encoding="utf-8")
    return dict(tmp=tmp_path, head=head, report=report, state=state, repo=repo, skiplists=SKIPLISTS, py=py)


class Hung(BaseException):
    """Raised by the alarm: a BaseException, so no `except OSError` or `except Exception` swallows it."""


def _invoke(args: list[str]):
    def hung(signum, frame):
        raise Hung(f"{' '.join(args)} took over {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    try:
        return CliRunner().invoke(main, args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _special(kind: str, tmp: Path) -> Path:
    if kind == "a device":
        return Path("/dev/zero")
    path = tmp / f"special-{kind.replace(' ', '-')}"
    if kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a dangling symlink":
        path.symlink_to(tmp / "nowhere")
    elif kind == "a folder":
        path.mkdir()
    return path


# Options that take the place of one the good invocation has.
INSTEAD = {
    ("run", "--selection"): ["-n", "0", "--junit", "{tmp}/j.xml"],
    ("run", "--rerun-of"): ["-n", "0", "--junit", "{tmp}/j.xml"],
}


def _args(path, param, special: Path, values: dict) -> list[str]:
    good = [str(a).format(**values) for a in INSTEAD.get((*path, param.opts[-1]), GOOD[path])]
    prefix = [*GITHUB, *path[1:]] if path[0] == "github" else list(path)
    if not param.opts[-1].startswith("-"):  # an argument: the good one replaced
        given = str(values["py"] if path[-1] == "import" else values["skiplists"])
        return [*prefix, *[str(special) if a == given else a for a in good]]
    flag = param.opts[-1]
    for i, arg in enumerate(good):
        if arg in param.opts:
            return [*prefix, *good[: i + 1], str(special), *good[i + 2 :]]
    return [*prefix, *good, flag, str(special)]


def _usable(param, kind: str) -> bool:
    """Whether `kind` is a value the option may take: a folder where folders are meant."""
    return kind == "a folder" and param.type.dir_okay


INPUT_KINDS = ("a FIFO", "a device", "a dangling symlink", "a folder")
INPUTS = [
    (path, param, kind)
    for path, param in OPTIONS
    if (*path, param.opts[-1]) not in OUTPUTS
    for kind in INPUT_KINDS
    if not _usable(param, kind)
]


@pytest.mark.parametrize("path,param,kind", INPUTS, ids=[f"{_id(p, o)} {k}" for p, o, k in INPUTS])
def test_an_input_that_is_no_file_is_refused_at_once(values, path, param, kind):
    special = _special(kind, values["tmp"])
    result = _invoke(_args(path, param, special, values))
    assert not isinstance(result.exception, Hung), result.exception
    assert result.exit_code == 2, (result.exit_code, result.output[-2000:], result.exception)
    assert "Traceback" not in result.output
    assert str(special) in result.output or special.name in result.output, result.output[-2000:]


OUTPUT_KINDS = ("a FIFO", "a dangling symlink", "a folder")
OUTS = [
    (path, param, kind)
    for path, param in OPTIONS
    if (*path, param.opts[-1]) in OUTPUTS
    for kind in OUTPUT_KINDS
    if not _usable(param, kind)
]


@pytest.mark.parametrize("path,param,kind", OUTS, ids=[f"{_id(p, o)} {k}" for p, o, k in OUTS])
def test_an_output_that_is_no_file_is_refused_and_left_as_it_was(values, path, param, kind):
    special = _special(kind, values["tmp"])
    mode = special.lstat().st_mode
    result = _invoke(_args(path, param, special, values))
    assert not isinstance(result.exception, Hung), result.exception
    assert result.exit_code == 2, (result.exit_code, result.output[-2000:], result.exception)
    assert "Traceback" not in result.output
    assert str(special) in result.output or special.name in result.output, result.output[-2000:]
    assert special.lstat().st_mode == mode, "the special file was replaced"
