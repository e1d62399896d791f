"""`explain`, `lint` and `propose` follow the walk a run recorded (`--recorded-walk`), where the module's text cannot tell.

The checkout below builds its walk through a helper, which the static reading refuses to guess at.
The run still observes what the module's own `_should_skip` looked up, and the skiplist commands
follow that record, saying so for each cell.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cells import Cell
from bot.cli import main
from bot.models.sources import get_source
from bot.outcomes import Status
from bot.run.checkout_tests import EXPORT_MODULE, execute_by_checkout
from bot.run.junit import run_properties
from tests.results.factory import Case, junit
from tests.run.plugin_helpers import write_skiplists
from tests.run.test_checkout_newest_version import newest_checkout

CELL = "BertModel::test_executorch_export_static_mlx"
SKIPS = '["mlx.static"]\nBertModel = "MLX cannot hold its pooler."\n'


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    root = newest_checkout(tmp_path_factory.mktemp("helper") / "c")
    module = root / EXPORT_MODULE
    text = module.read_text(encoding="utf-8")
    # The walk's first scope now comes from a helper: the static reading refuses, the module runs as before.
    text = text.replace('        scopes = ["all"]\n', "        scopes = _broadest()\n", 1)
    module.write_text(text + '\n\ndef _broadest():\n    return ["all"]\n', encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def recorded(checkout, tmp_path_factory) -> Path:
    """The JUnit of a real run of the cell by the checkout's own test, with the walk it recorded."""
    folder = tmp_path_factory.mktemp("run")
    run = execute_by_checkout(
        Cell.parse(CELL), get_source(f"transformers-tests:{checkout}"), write_skiplists(folder / "s", SKIPS)
    )
    assert (run.status, run.skip_scope) == (Status.SKIPPED, "mlx.static"), run.message
    path = folder / "junit.xml"
    path.write_text(junit([Case(CELL, "skipped", run.message, extra=dict(run_properties(run)))]), encoding="utf-8")
    return path


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_explain_follows_the_recorded_walk_where_the_text_cannot_be_read(checkout, recorded, tmp_path):
    skiplists = write_skiplists(tmp_path / "s", SKIPS)
    common = ["skiplist", "explain", "--skiplists", str(skiplists), "--source", f"transformers-tests:{checkout}"]
    refused = _invoke(*common, CELL)
    assert refused.exit_code == 2 and "pass --recorded-walk" in refused.output, refused.output
    said = _invoke(*common, "--recorded-walk", str(recorded), CELL)
    assert said.exit_code == 0, said.output
    assert (
        "walk: the checkout's tests/exporters/test_export.py, as the run recorded its lookups for this cell"
        in said.output
    )
    assert "skip scopes walked: all → static → executorch → executorch.static → mlx → mlx.static" in said.output
    assert "skipped by scope `mlx.static`: MLX cannot hold its pooler." in said.output
    other = _invoke(*common, "--recorded-walk", str(recorded), "BertModel::test_executorch_export_dynamic_mlx")
    assert other.exit_code == 0, other.output
    assert "the bot's own (docs/skiplists.md) (the run recorded no walk for this cell)" in other.output


def test_lint_knows_the_scopes_the_run_recorded(checkout, recorded, tmp_path):
    skiplists = write_skiplists(tmp_path / "s", SKIPS + '\n["mlx.sideways"]\nBertModel = "Never visited."\n')
    common = ["skiplist", "lint", "--source", f"transformers-tests:{checkout}", str(skiplists / "export_skips.toml")]
    assert _invoke(*common).exit_code == 2
    said = _invoke(*common, "--recorded-walk", str(recorded))
    assert said.exit_code == 0, said.output
    # The recorded scope is known; a scope no walk visits is still named, with whose walk it missed.
    assert "`mlx.static`" not in said.output
    assert (
        "unknown scope `mlx.sideways`: the walk of tests/exporters/test_export.py, as the run recorded it"
        in said.output
    )


def test_results_that_recorded_nothing_are_refused_by_name(checkout, tmp_path):
    plain = tmp_path / "junit.xml"
    plain.write_text(junit([Case(CELL)]), encoding="utf-8")
    said = _invoke("skiplist", "explain", "--recorded-walk", str(plain), CELL)
    assert said.exit_code == 2
    assert "--recorded-walk: no cell in these results recorded the checkout's walk" in said.output


def test_propose_takes_its_scope_from_the_recorded_walk(checkout, recorded, tmp_path):
    from bot.diff.model import write_report
    from tests.propose.helpers import report, result, skiplists_dir

    cell = Cell.parse(CELL)
    path = tmp_path / "report.json"
    write_report(report({cell: result(cell, Status.FAILED)}), path)
    folder = skiplists_dir(tmp_path)
    common = [
        "propose",
        "--report",
        str(path),
        "--skiplists",
        str(folder),
        "--source",
        f"transformers-tests:{checkout}",
    ]
    assert _invoke(*common).exit_code == 2  # the text alone cannot tell its scopes
    said = CliRunner().invoke(main, [*common, "--recorded-walk", str(recorded)])
    assert said.exit_code == 0, said.stderr
    recorded_scopes = ("all", "static", "executorch", "executorch.static", "mlx", "mlx.static")
    (added,) = [line for line in said.stdout.splitlines() if line.startswith("+[")]
    assert added.strip('+[]"') in recorded_scopes and "BertModel" in said.stdout
