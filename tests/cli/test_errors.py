"""The CLI boundary: every expected failure is one `error:` line naming the file or value, exit 2, never a traceback.

Each case once exited 1 with a traceback; now each names what to fix.
"""

from __future__ import annotations

import json
import os
import stat

import click
import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.cli.common import handle_errors
from bot.errors import BotError
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit

CELL = "BertModel::test_onnx_export_static"


def invoke(*args, cwd=None):
    with pytest.MonkeyPatch.context() as mp:
        if cwd is not None:
            mp.chdir(cwd)
        return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, exit_code: int = 2) -> str:
    """The result's only stderr line, after checking the exit code and that no exception escaped."""
    assert result.exit_code == exit_code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


@pytest.fixture
def head(tmp_path):
    path = tmp_path / "head.xml"
    path.write_text(junit([Case(CELL)]), encoding="utf-8")
    return path


def test_skiplist_import_into_a_missing_folder_makes_it(tmp_path):
    source = tmp_path / "skips.py"
    source.write_text('EXPORT_SKIPS = {"all": {"BertModel": "reason"}}\n')
    result = invoke("skiplist", "import", source, "--name", "EXPORT_SKIPS", "-o", tmp_path / "missing" / "x.toml")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "missing" / "x.toml").read_text() == '[all]\nBertModel = "reason"\n'


def test_skiplist_import_output_honours_the_umask(tmp_path):
    source = tmp_path / "skips.py"
    source.write_text('EXPORT_SKIPS = {"all": {"BertModel": "reason"}}\n')
    old = os.umask(0o022)
    try:
        assert invoke("skiplist", "import", source, "--name", "EXPORT_SKIPS", "-o", tmp_path / "x.toml").exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x.toml").stat().st_mode) == 0o644


def test_skiplist_import_of_a_duplicate_key_points_at_the_source_line(tmp_path):
    source = tmp_path / "skips.py"
    source.write_text('EXPORT_SKIPS = {\n    "all": {\n        "A": "x",\n        "A": "y",\n    },\n}\n')
    result = invoke("skiplist", "import", source, "--name", "EXPORT_SKIPS", "-o", tmp_path / "x.toml")
    line = one_error_line(result)
    assert line.startswith(f"error: {source}:4:9: duplicate model class 'A' in 'all' (first at line 3)")
    assert "lint" not in line and "<stdout>" not in line and "x.toml" not in line
    assert not (tmp_path / "x.toml").exists()


def test_diff_json_into_a_missing_folder_makes_it(tmp_path, head):
    report = tmp_path / "missing" / "deeper" / "report.json"
    result = invoke("diff", "--skiplists", SKIPLISTS, "--head", head, "--json", report)
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["verdict"] == "success"


def test_diff_output_blocked_by_a_file_names_it(tmp_path, head):
    (tmp_path / "out").write_text("a file")
    result = invoke("diff", "--skiplists", SKIPLISTS, "--head", head, "--markdown", tmp_path / "out" / "c.md")
    assert one_error_line(result) == (
        f"error: {tmp_path / 'out' / 'c.md'}: cannot make its folder, {tmp_path / 'out'} is a file; "
        "check the path and its permissions"
    )


@pytest.mark.parametrize(
    "pyproject, message",
    [
        ("[tool.export-bot]\nskiplists = 5\n", "[tool.export-bot] skiplists must be a non-empty string, not a number"),
        ("[tool]\nexport-bot = 5\n", "`tool.export-bot` must be a table"),
        ("[tool.export-bot]\nmin-passes = 'three'\n", "[tool.export-bot] min-passes must be a whole number"),
    ],
)
def test_a_malformed_configuration_is_one_line_naming_the_key(tmp_path, pyproject, message):
    (tmp_path / "pyproject.toml").write_text(pyproject)
    line = one_error_line(invoke("skiplist", "explain", CELL, cwd=tmp_path))
    assert line.startswith("error: pyproject.toml: ") and message in line


@pytest.mark.parametrize(
    "pyproject, message",
    [
        ("[tool.export-bot]\nskiplists = 5\n", "skiplists must be a non-empty string"),
        ("[tool.export-bot]\nmin-passes = 0\n", "min-passes must be at least 1"),
        ("[tool.export-bot]\ngithub-timeout = 'soon'\n", "github-timeout must be a whole number"),
    ],
)
def test_github_obsolete_skips_with_a_malformed_configuration(tmp_path, pyproject, message):
    config = tmp_path / "pyproject.toml"
    config.write_text(pyproject)
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"schema": "export-bot/report@1", "verdict": "success"}))
    result = invoke("github", "--repo", "o/r", "--token", "t", "--config", config, "obsolete-skips", "--report", report)
    line = one_error_line(result)
    assert line.startswith(f"error: {config}: [tool.export-bot] ") and message in line


@pytest.mark.parametrize(
    "document, field",
    [
        ({"categories": []}, "`categories` must be an object, not a list"),
        ({"categories": {"newly_broken": {}}}, "`categories.newly_broken` must be a list, not an object"),
        (
            {"categories": {"newly_broken": [{"status": "failed"}]}},
            "`categories.newly_broken[0].cell` must be a string, not null (or missing)",
        ),
        ({"cells": [{"cell": CELL, "status": "passed", "probe": "yes"}]}, "`cells[0].probe` must be true or false"),
        ({"needs_rerun": ["BertModel::nope"]}, "`needs_rerun[0]`: "),
        ({"counts": {"onnx/static": {"passed": -1}}}, "`counts.onnx/static.passed` must be zero or more"),
        ({"verdict": "green"}, "`verdict` must be one of success, failure, neutral, not 'green'"),
        ({"problems": ["boom"]}, "`problems[0]` must be an object, not 'boom'"),
    ],
)
def test_a_report_with_a_wrong_field_names_the_field(tmp_path, document, field):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"schema": "export-bot/report@1", "verdict": "success", **document}))
    line = one_error_line(invoke("propose", "--report", report, "--skiplists", SKIPLISTS))
    assert line.startswith(f"error: {report}: field {field}"), line
    assert line.endswith("regenerate it with `export-bot diff`")


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", ":1: not UTF-8 text (invalid start byte at byte 0); pass a text file"),
        (b'{"cells": "BertModel"}', ": field `cells` must be a list of cell ids, not a string"),
        (b'{"cells": [3]}', ": field `cells[0]` must be a cell id string, not a number"),
        (b'{"schema": 2, "cells": []}', ": field `schema` is 2, this export-bot reads 1"),
        (b'{"cells": [], "summary": 5}', ": field `summary` must be a string or null, not a number"),
        (b"[1, 2]", ": expected an object with a `cells` list of cell ids"),
    ],
)
def test_a_bad_selection_file_names_the_field(tmp_path, head, content, message):
    selection = tmp_path / "selection.json"
    selection.write_bytes(content)
    result = invoke("diff", "--skiplists", SKIPLISTS, "--head", head, "--selection", selection)
    assert one_error_line(result).startswith(f"error: {selection}{message}")


def test_handle_errors_maps_bot_errors_and_os_errors_and_nothing_else():
    class Late(BotError):
        exit_code = 1

    @click.command()
    @click.argument("what")
    @handle_errors
    def command(what):
        if what == "bot":
            raise Late("late: the run did not complete")
        if what == "os":
            open("/nonexistent-folder/x")  # noqa: SIM115
        raise KeyError(what)

    runner = CliRunner()
    assert one_error_line(runner.invoke(command, ["bot"]), exit_code=1) == "error: late: the run did not complete"
    assert one_error_line(runner.invoke(command, ["os"])) == (
        "error: /nonexistent-folder/x: No such file or directory; check the path and its permissions"
    )
    # A bug stays a bug: an unexpected exception is not dressed up as a usage error.
    assert isinstance(runner.invoke(command, ["bug"]).exception, KeyError)


def test_run_junit_into_a_missing_folder_makes_it(tmp_path):
    from bot.diff.model import Report, write_report

    write_report(Report(verdict="success", headline="fine", baseline=True), tmp_path / "report.json")
    junit_out = tmp_path / "missing" / "rerun.xml"
    result = invoke("run", "--rerun-of", tmp_path / "report.json", "--junit", junit_out, "--skiplists", SKIPLISTS)
    assert result.exit_code == 0, result.output
    assert "<testsuites>" in junit_out.read_text()


def test_a_report_that_is_not_json_is_one_line(tmp_path):
    report = tmp_path / "report.json"
    report.write_bytes(b"\xff\xfe{")
    line = one_error_line(invoke("propose", "--report", report, "--skiplists", SKIPLISTS))
    assert line.startswith(f"error: {report}: cannot read the report (1: not UTF-8 text")
    report.write_text("[" * 100_000)
    line = one_error_line(invoke("propose", "--report", report, "--skiplists", SKIPLISTS))
    assert line.startswith(f"error: {report}: cannot read the report (maximum recursion depth exceeded")


DEEP_TOML = "a = " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize(
    "where, args, message",
    [
        ("pyproject.toml", ("skiplist", "explain", CELL), "pyproject.toml: not valid TOML (arrays or tables nested"),
        ("s/export_skips.toml", ("skiplist", "explain", "--skiplists", "s", CELL), "s/export_skips.toml: arrays or"),
        ("event.json", ("github", "--event", "event.json", "command"), "event.json: cannot read the event payload"),
    ],
)
def test_input_nested_deeper_than_the_parser_goes_is_one_line(tmp_path, where, args, message):
    path = tmp_path / where
    path.parent.mkdir(exist_ok=True)
    path.write_text("[tool.export-bot]\ncore = " + DEEP_TOML[4:] if where == "pyproject.toml" else DEEP_TOML)
    if where == "event.json":
        path.write_text("[" * 100_000)
    assert one_error_line(invoke(*args, cwd=tmp_path)).startswith(f"error: {message}")


def test_library_notices_at_import_are_quiet_unless_asked_for():
    """torchao's missing CUDA kernels, Triton's absence and torch's pytree deprecation: not an export's business."""
    import logging

    for name in ("torchao", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.NOTSET)
    CliRunner().invoke(main, ["skiplist", "--help"])
    assert logging.getLogger("torchao.kernel.intmm").getEffectiveLevel() == logging.ERROR
    assert logging.getLogger("torch.utils._pytree").getEffectiveLevel() == logging.ERROR
    for name in ("torchao", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.NOTSET)
    CliRunner().invoke(main, ["-vv", "skiplist", "--help"])
    assert logging.getLogger("torchao").level == logging.NOTSET  # -vv shows them again
