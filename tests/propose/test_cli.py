"""`export-bot propose`: the patch on stdout, --apply, --history (report.json and JUnit), bad input."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from bot.cli import main
from bot.diff.model import load_report, write_report
from tests.conftest import ROOT
from tests.propose.helpers import outcomes, report, row, skiplists_dir

SKIPS = '# ONNX, every variant.\n[onnx]\nFooModel = "Old reason."\n'


def run(*args):
    return CliRunner().invoke(main, ["propose", *map(str, args)])


def setup(tmp_path, results):
    folder = skiplists_dir(tmp_path, SKIPS)
    path = tmp_path / "report.json"
    write_report(report(results), path)
    return folder, path


def test_prints_the_patch_and_applies_it(tmp_path):
    folder, path = setup(tmp_path, outcomes(row("NewModel"), lambda c: c.dynamic))
    result = run("--report", path, "--skiplists", folder)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("--- a/skiplists/export_skips.toml")
    assert "+NewModel = " in result.stdout and "add: NewModel in dynamic" in result.stderr
    assert "NewModel" not in (folder / "export_skips.toml").read_text()  # no --apply: nothing written

    applied = run("--report", path, "--skiplists", folder, "--apply", "--write-report")
    assert applied.exit_code == 0 and "wrote" in applied.stderr
    assert "NewModel = " in (folder / "export_skips.toml").read_text()
    assert load_report(path).proposal.entries[0].model_class == "NewModel"
    again = run("--report", path, "--skiplists", folder)
    assert again.exit_code == 0 and again.stdout == "" and "no skiplist change proposed" in again.stderr


def test_history_from_reports_and_junit(tmp_path):
    folder, path = setup(tmp_path, outcomes(row("FooModel"), lambda c: False, probe=True))
    junit = tmp_path / "old.xml"
    cases = "".join(
        f'<testcase classname="FooModel" name="{c.name}"><properties>'
        f'<property name="probe" value="true"/></properties></testcase>'
        for c in row("FooModel")
    )
    junit.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="x">{cases}</testsuite></testsuites>')
    # The report itself listed in --history is not counted twice.
    not_enough = run("--report", path, "--history", path, "--history", junit, "--skiplists", folder)
    assert not_enough.exit_code == 0 and not_enough.stdout == ""
    enough = run("--report", path, "--history", junit, "--history", path, "--history", junit, "--skiplists", folder)
    assert "-FooModel = " in enough.stdout
    lenient = run("--report", path, "--history", junit, "--min-passes", "2", "--skiplists", folder)
    assert "-FooModel = " in lenient.stdout


def test_bad_input_exits_2_with_a_message(tmp_path):
    folder, path = setup(tmp_path, {})
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something/else"}))
    for args, words in [
        (["--report", tmp_path / "missing.json"], "cannot read the report"),
        (["--report", tmp_path / "broken.json"], "cannot read the report"),
        (["--report", tmp_path / "other.json"], "schema"),
        (["--report", path, "--history", tmp_path / "nope.xml"], "history file not found"),
        (["--report", path, "--skiplists", tmp_path / "nowhere"], "no such skiplist folder"),
    ]:
        result = run(*args, *([] if "--skiplists" in args else ["--skiplists", folder]))
        assert result.exit_code == 2, (args, result.output)
        assert words in result.stderr and "Traceback" not in result.stderr


def test_a_broken_skiplist_is_a_clear_error(tmp_path):
    folder, path = setup(tmp_path, outcomes(row("NewModel"), lambda c: c.dynamic))
    (folder / "export_skips.toml").write_text('[onnx]\nFooModel = "unterminated\n')
    result = run("--report", path, "--skiplists", folder)
    assert result.exit_code == 2 and "export_skips.toml" in result.stderr


def test_propose_never_imports_torch(tmp_path):
    folder, path = setup(tmp_path, outcomes(row("NewModel"), lambda c: c.dynamic))
    code = (
        "import sys; from click.testing import CliRunner; from bot.cli import main; "
        f"r = CliRunner().invoke(main, ['propose', '--report', {str(path)!r}, '--skiplists', {str(folder)!r}]); "
        "assert r.exit_code == 0, r.output; "
        "heavy = [m for m in ('torch', 'transformers', 'onnx', 'openvino', 'executorch', 'github') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
