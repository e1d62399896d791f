"""`export-bot skiplist check-tables`: upstream's real skip tables against their TOML, and the lines that end the drift.

Upstream's tests/exporters/test_export.py is read at test time from `../shared/upstream` (where
`EXPORT_BOT_UPSTREAM` points, as tests/run/test_parity_upstream.py does), copied into a checkout
layout in tmp, never into this repository.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.skiplist.importer import read_tables
from bot.skiplist.model import load_skiplist
from tests.conftest import ROOT

MODULE = Path("tests") / "exporters" / "test_export.py"
DOCS = ROOT / "docs" / "skiplists.md"
TABLES = ("EXPORT_SKIPS", "ONNX_DISABLE_OPTIMIZE")


def _upstream_module() -> Path:
    given = os.environ.get("EXPORT_BOT_UPSTREAM")
    path = (Path(given) if given else ROOT.parent / "shared" / "upstream") / MODULE
    if not path.is_file():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI checks upstream's real skip tables, but {path} is missing")
        pytest.skip(f"upstream's real test module is not at {path} (set EXPORT_BOT_UPSTREAM)")
    return path


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A checkout layout holding a copy of upstream's real module, its tables imported to skiplists/ by the bot."""
    root = tmp_path / "transformers"
    (root / MODULE).parent.mkdir(parents=True)
    shutil.copyfile(_upstream_module(), root / MODULE)
    (root / "pyproject.toml").write_text('[tool.export-bot]\nskiplists = "skiplists"\n', encoding="utf-8")
    imported = run("import", str(root / MODULE), "-o", str(root / "skiplists"))
    assert imported.exit_code == 0, imported.output
    return root


def run(*args: str):
    result = CliRunner().invoke(main, ["skiplist", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_the_imported_tables_agree_and_one_edited_entry_is_listed(checkout):
    agreed = run("check-tables", "--checkout", str(checkout))
    assert agreed.exit_code == 0, agreed.output
    assert agreed.output == "EXPORT_SKIPS, ONNX_DISABLE_OPTIMIZE compared: 0 differences\n"

    toml = checkout / "skiplists" / "export_skips.toml"
    original = load_skiplist(toml).scopes["dynamic"]["Sam2Model"]
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace(f'Sam2Model = "{original}"', 'Sam2Model = "Exceeds the timeout."'), encoding="utf-8")
    differs = run("check-tables", "--checkout", str(checkout))
    assert differs.exit_code == 1, differs.output
    assert differs.output.splitlines() == [
        f'EXPORT_SKIPS[\'dynamic\'] Sam2Model: the reasons differ: module "{original}", TOML "Exceeds the timeout."',
        "EXPORT_SKIPS, ONNX_DISABLE_OPTIMIZE compared: 1 difference",
    ]


def test_an_entry_on_one_side_only_is_listed_with_its_side(checkout):
    toml = checkout / "skiplists" / "onnx_disable_optimize.toml"
    text = toml.read_text(encoding="utf-8")
    edited = re.sub(r'^HubertForXVector = ".*"\n', "", text, count=1, flags=re.M)
    toml.write_text(edited.replace("\n[dynamic]\n", '\n[dynamic]\nBertModel = "Slow."\n', 1), encoding="utf-8")
    result = run("check-tables", "--checkout", str(checkout))
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(
        line.startswith("ONNX_DISABLE_OPTIMIZE['dynamic'] HubertForXVector: only in the module: ") for line in lines
    )
    assert "ONNX_DISABLE_OPTIMIZE['dynamic'] BertModel: only in onnx_disable_optimize.toml: \"Slow.\"" in lines, lines


def test_bad_input_exits_2(checkout, tmp_path):
    assert run("check-tables", "--checkout", str(tmp_path / "nowhere")).exit_code == 2
    assert run("check-tables", "--checkout", str(checkout), "--skiplists", str(tmp_path / "none")).exit_code == 2
    (checkout / "pyproject.toml").write_text("", encoding="utf-8")
    said = run("check-tables", "--checkout", str(checkout))
    assert said.exit_code == 2 and "pass --skiplists DIR" in said.output


def docs_lines() -> str:
    """The module's lines as docs/skiplists.md shows them: the python block after its marker."""
    text = DOCS.read_text(encoding="utf-8")
    marker = text.index("<!-- the module's lines:")
    return re.search(r"```python\n(.*?)```", text[marker:], re.S).group(1)


def test_the_docs_lines_make_the_real_module_read_the_toml(checkout):
    module = checkout / MODULE
    source = module.read_text(encoding="utf-8")
    literal = {table.name: {s.name: dict(s.entries) for s in table.scopes} for table in read_tables(source).tables}
    # The docs' lines in place of the two literal tables, as an adopter edits the module.
    spans = [(s.lineno, s.end_lineno) for s in ast.parse(source).body if _assigns(s) in TABLES]
    assert len(spans) == 2, spans
    lines = source.splitlines(keepends=True)
    (first, first_end), (second, second_end) = spans
    snippet = docs_lines()
    edited = [*lines[: first - 1], snippet, *lines[first_end : second - 1], *lines[second_end:]]
    module.write_text("".join(edited), encoding="utf-8")

    # What the module now binds: its statements from the docs' lines, run with the copy's own __file__
    # (the rest of the module imports torch and transformers; none of it assigns the tables again).
    tree = ast.parse("".join(edited), filename=str(module))
    start = len("".join(lines[: first - 1]).splitlines()) + 1
    end = start + len(snippet.splitlines()) - 1
    ours = [s for s in tree.body if start <= s.lineno <= end]
    assert not [s for s in tree.body if s not in ours and _assigns(s) in TABLES]
    namespace = {"__file__": str(module), "__name__": "test_export"}
    exec(compile(ast.Module(body=ours, type_ignores=[]), str(module), "exec"), namespace)  # noqa: S102
    for name in TABLES:
        toml = load_skiplist(checkout / "skiplists" / f"{name.lower()}.toml", names=True).scopes
        assert namespace[name] == toml == literal[name], name

    said = run("check-tables", "--checkout", str(checkout))
    assert said.exit_code == 0, said.output
    assert said.output == "no table compared; EXPORT_SKIPS, ONNX_DISABLE_OPTIMIZE read from the TOML: 0 differences\n"


def _assigns(stmt: ast.stmt) -> str | None:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return next((t.id for t in targets if isinstance(t, ast.Name)), None)
