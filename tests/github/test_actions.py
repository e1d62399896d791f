"""Workflow commands, step outputs and the job summary."""

from __future__ import annotations

import io

from bot.publish.actions import Actions
from tests.github.conftest import outputs


def test_annotations_escape_newlines_and_properties():
    stream = io.StringIO()
    Actions(stream).annotate("error", "two\nlines 100%", file="a,b:c.py", line=3)
    assert stream.getvalue() == "::error file=a%2Cb%3Ac.py,line=3::two%0Alines 100%25\n"


def test_outputs_survive_multiline_values_and_eof_lookalikes(tmp_path):
    path = tmp_path / "out"
    actions = Actions.from_env(io.StringIO(), {"GITHUB_OUTPUT": str(path)})
    actions.set_output("request", '{"a": 1}\nEOF\nmore')
    actions.set_output("kind", "rerun")
    assert outputs(path) == {"request": '{"a": 1}\nEOF\nmore', "kind": "rerun"}


def test_summary_appends_and_outside_actions_nothing_is_written(tmp_path):
    summary = tmp_path / "summary.md"
    actions = Actions.from_env(io.StringIO(), {"GITHUB_STEP_SUMMARY": str(summary)})
    assert actions.write_summary("# one") and actions.write_summary("two\n")
    assert summary.read_text() == "# one\ntwo\n"
    assert not Actions.from_env(io.StringIO(), {}).write_summary("x")
