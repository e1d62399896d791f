"""`skiplist import MODULE.py` converts every skip table of a checkout's export module, each to the file its run reads."""

from __future__ import annotations

import ast
import types
from pathlib import Path

from click.testing import CliRunner

from bot.cli import main
from bot.run.checkout_tests import install_tables
from bot.skiplist.importer import read_tables
from tests.conftest import SKIPLISTS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NEXT = FIXTURES / "transformers_checkout_next" / "tests" / "exporters" / "test_export.py"
CURRENT = FIXTURES / "transformers_checkout_export" / "tests" / "exporters" / "test_export.py"
UPSTREAM = SKIPLISTS.parent / "tests" / "data" / "upstream" / "test_export_skips.py"


def run(*args) -> object:
    return CliRunner().invoke(main, ["skiplist", "import", *map(str, args)])


def literal_tables(path: Path) -> dict[str, dict]:
    """The module's upper-case dict literals, read as Python reads them (never running the module)."""
    tables = {}
    for stmt in ast.parse(path.read_text("utf-8")).body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
        if isinstance(target, ast.Name) and target.id.isupper() and isinstance(stmt.value, ast.Dict):
            tables[target.id] = ast.literal_eval(stmt.value)
    return tables


def test_every_table_of_the_next_version_becomes_the_file_its_run_reads(tmp_path):
    result = run(NEXT, "-o", tmp_path / "skiplists")
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "skiplists").iterdir())
    assert written == [
        "executorch_disable_partition.toml",
        "executorch_partition_exclude.toml",
        "export_skips.toml",
        "onnx_disable_optimize.toml",
    ]
    exclude = (tmp_path / "skiplists" / "executorch_partition_exclude.toml").read_text("utf-8")
    # Its values are names, so the comments are its reasons: every one is kept, above what it explains.
    assert exclude.splitlines() == [
        "# XNNPACK partitioner configs to withhold, keyed by scope like `EXPORT_SKIPS`: tables this version",
        "# added, which feed the exporter config. Its values are names, so the reasons are the comments.",
        "",
        "# Dynamic shapes only: the static variants lower and run fully delegated.",
        '["executorch.dynamic"]',
        "# Rank-7 activations, past the 6 dimensions XNNPACK can define.",
        'ViTModel = ["PermuteConfig", "ViewCopyConfig"]',
    ]
    # The run-time replacement puts back exactly what the module held, tuples included.
    module = types.SimpleNamespace(**{name: {} for name in literal_tables(NEXT)})
    installed = install_tables(vars(module), tmp_path / "skiplists")
    assert set(installed) == set(literal_tables(NEXT))
    assert vars(module) == literal_tables(NEXT)
    lint = CliRunner().invoke(main, ["skiplist", "lint", str(tmp_path / "skiplists")])
    assert lint.exit_code == 0, lint.output


def test_the_current_version_keeps_its_scope_comments_and_the_shipped_files_are_reproduced(tmp_path):
    assert run(CURRENT, "-o", tmp_path / "current").exit_code == 0
    skips = (tmp_path / "current" / "export_skips.toml").read_text("utf-8")
    assert "# Every backend, dynamic-shape only.\n[dynamic]\n" in skips
    assert "# torch.export (dynamo), every variant.\n[dynamo]\n" in skips
    assert run(UPSTREAM, "-o", tmp_path / "upstream").exit_code == 0
    for name in ("export_skips.toml", "onnx_disable_optimize.toml"):
        assert (tmp_path / "upstream" / name).read_bytes() == (SKIPLISTS / name).read_bytes()


def test_tables_it_cannot_convert_are_named_with_why_and_the_others_written(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import torch\n"
        "EXPORT_SKIPS = {'all': {'BertModel': 'pooler'}}\n"
        "ALWAYS = {'BertModel', 'T5Model'}\n"
        "TOLERANCES = {'fp32': 1e-4}\n"
        "SPREAD = {**EXPORT_SKIPS}\n"
        "DYNAMIC_EXPORT_PARAMS = make_params()\n"  # not a table at all: not named
        "MAX = 3\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["skiplist", "import", str(source), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["export_skips.toml"]
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert warnings == [
        f"warning: ALWAYS not imported: {source}:3:10: a set, not scope → model class tables; "
        "write it as a dict of scopes",
        f"warning: TOLERANCES not imported: {source}:4:23: the value of scope 'fp32' is not a dict literal",
        f"warning: SPREAD not imported: {source}: a scope key of SPREAD is a `**` spread; write the entries out",
    ]


def test_nothing_convertible_is_one_line_exit_2_and_writes_nothing(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("ALWAYS = {'BertModel'}\n", encoding="utf-8")
    result = run(source, "-o", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "no skip table could be imported (ALWAYS not imported: " in result.output
    assert not (tmp_path / "out").exists()
    folder_wanted = run(NEXT, "-o", tmp_path / "x.toml")
    assert folder_wanted.exit_code == 2 and "-o names a folder; pass --name NAME" in folder_wanted.output
    assert not (tmp_path / "x.toml").exists()


def test_stdout_names_each_file_and_one_table_still_imports_alone():
    every = run(NEXT)
    assert every.exit_code == 0
    assert "# executorch_disable_partition.toml\n" in every.output
    assert 'ViTForImageClassification = "Needs an op ExecuTorch does not ship; undelegated, it runs."' in every.output
    one = run(NEXT, "--name", "EXECUTORCH_DISABLE_PARTITION")
    assert one.exit_code == 0 and one.output.startswith("# Classes exported without the partitioner")


def test_read_tables_order_is_the_modules():
    found = read_tables(NEXT.read_text("utf-8"), str(NEXT))
    assert [t.name for t in found.tables] == [
        "EXPORT_SKIPS",
        "ONNX_DISABLE_OPTIMIZE",
        "EXECUTORCH_PARTITION_EXCLUDE",
        "EXECUTORCH_DISABLE_PARTITION",
    ]
    assert found.refused == ()


def test_one_table_of_names_imports_alone_too(tmp_path):
    out = tmp_path / "executorch_partition_exclude.toml"
    result = run(NEXT, "--name", "EXECUTORCH_PARTITION_EXCLUDE", "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_text("utf-8").endswith('ViTModel = ["PermuteConfig", "ViewCopyConfig"]\n')
    assert f"{out}: 1 entries in 1 scopes" in result.output
