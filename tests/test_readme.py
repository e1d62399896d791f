"""The README's first screen is what an adopter copies: it must be what examples/ and the workflows hold.

The caller snippet is the conformance caller's jobs, verbatim; each input of the table is one the
reusable workflow declares, with the default it says; the test command stays the one .ci/run
runs; and no install line names a package index that does not have the bot.
"""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CALLER = ROOT / "examples" / "transformers" / ".github" / "workflows" / "export-conformance.yml"
REUSABLE = ROOT / ".github" / "workflows" / "conformance.yml"


def _after(marker: str) -> str:
    return README[README.index(marker) :]


def test_the_caller_snippet_is_the_examples_jobs_verbatim():
    snippet = re.search(r"```yaml\n(.*?)```", _after("<!-- the conformance caller's jobs"), re.S).group(1)
    caller = CALLER.read_text(encoding="utf-8")
    assert snippet == caller[caller.index("\njobs:\n") + 1 :]


def _inputs_table() -> list[list[str]]:
    block = _after("<!-- conformance.yml's inputs").split("\n\n")[0].splitlines()
    rows = [line for line in block if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def test_each_input_of_the_table_is_declared_with_the_default_it_says():
    document = yaml.safe_load(REUSABLE.read_text(encoding="utf-8"))
    declared = (document.get("on") or document[True])["workflow_call"]["inputs"]
    rows = _inputs_table()
    assert len(rows) >= 8, rows
    for names, default, _ in rows:
        inputs = re.findall(r"`([\w-]+)`", names)
        defaults = [None] * len(inputs) if default == "required" else re.findall(r"`([^`]*)`", default)
        assert len(defaults) == len(inputs), (names, default)
        for name, said in zip(inputs, defaults):
            found = declared[name]  # a KeyError: the README names an input the workflow does not take
            if said is None:
                assert found.get("required") is True, name
            else:
                assert not found.get("required") and said.strip('"') == str(found.get("default")), (name, said)


def test_the_readme_test_command_is_what_ci_runs():
    # The README opens with them: the first code block, before any section.
    first = re.search(r"```(\w*)\n(.*?)```", README, re.S)
    assert first.group(1) == "bash" and first.start() < README.index("\n## "), "the README opens with the two commands"
    develop = first.group(2)
    commands = [line.split("#")[0].strip() for line in develop.splitlines()]
    assert commands == ["bash scripts/setup.sh && .venv/bin/export-bot check", "bash scripts/test.sh"]
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_no_install_line_asks_pypi_for_the_bot():
    """export-bot is not on PyPI: an install names the repository (`@ git+…`) or a checkout (`./.export-bot`)."""
    texts = {"README.md": README, **{p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")}}
    for name, text in texts.items():
        for command in re.findall(r"pip install[^`]*", text):
            if re.search(r"""\bexport-bot(\[\w+\])?["']?(\s|$)""", command):
                assert "@" in command or "./" in command, (name, command)
