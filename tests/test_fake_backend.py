"""Adding a backend is its declaration and its runner module: a fake one, registered alone, reaches every stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot import registry
from bot.cells import Cell, CellIdError, cells_for
from bot.cli import main
from bot.diff.model import Report
from bot.publish.command import help_text
from bot.report import render_comment, render_summary
from bot.run.judge import Rule, rule_for
from bot.scopes import exactness_scope, exactness_scopes, export_scopes, skip_scopes
from bot.site import NightlyReport, build_data
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit
from tests.run.plugin_helpers import run_cells

FAKERT = registry.Backend(
    "fakert",
    word="fakert",
    label="fk",
    exporter="Fakert",
    described="Fakert",
    runner="fakert",  # tests/fixtures/fake_backend/fakert.py
    torch_gated=False,
    colour="#bf8700",
)
STATIC = "BertModel::test_fakert_export_static"
DYNAMIC = "BertModel::test_fakert_export_dynamic"
RUNNER_FOLDER = Path(__file__).parent / "fixtures" / "fake_backend"


@pytest.fixture(scope="module")
def fakert(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch, registry.registered(FAKERT):
        patch.syspath_prepend(str(RUNNER_FOLDER))
        yield


@pytest.fixture(scope="module")
def head(fakert, tmp_path_factory):
    """A real run of the fake backend's two forward cells of BertModel, in this process."""
    tmp = tmp_path_factory.mktemp("fakert")
    code, result = run_cells(tmp, [STATIC, DYNAMIC], in_process=True)
    assert code in (0, 1), f"pytest exited {code}"
    return tmp / "out.xml", result


def test_the_grammar_reads_and_writes_its_test_names(fakert):
    assert Cell.parse(STATIC) == Cell("BertModel", "fakert", "static")
    assert Cell("BertModel", "fakert", "dynamic").id == DYNAMIC
    assert [cell.id for cell in cells_for("BertModel", generative=False, backends=["fakert"])] == [STATIC, DYNAMIC]
    # The `/export-check` commands: inside the help's table each `|` is escaped, or it would end the cell.
    assert "--backend dynamo\\|onnx\\|openvino\\|executorch\\|fakert" in help_text()


def test_a_run_judges_its_cells_in_the_junit(head):
    _, result = head
    assert {cell_id: case.outcome for cell_id, case in result.cases.items()} == {STATIC: "passed", DYNAMIC: "failure"}
    assert result.cases[DYNAMIC].message == "NotImplementedError: fakert exports static shapes only"
    assert result.cases[STATIC].properties["backend"] == "fakert"


@pytest.fixture(scope="module")
def report(head, tmp_path_factory) -> Report:
    """The run compared with a base where both cells passed: the dynamic one newly broken."""
    tmp = tmp_path_factory.mktemp("fakert-diff")
    base, out = tmp / "base.xml", tmp / "report.json"
    base.write_text(junit([Case(STATIC), Case(DYNAMIC)]), encoding="utf-8")
    args = ["diff", "--skiplists", str(SKIPLISTS), "--base", str(base), "--head", str(head[0]), "--json", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return Report.from_json(json.loads(out.read_text("utf-8")))


def test_the_comment_counts_names_and_proposes_its_cells(report):
    comment = render_comment(report)
    assert "| fakert | ✅ 1 | ❌ 1 |" in comment  # the counts table's row
    assert "1 class × fakert dynamic" in comment  # the cause's extent, by the backend's name
    assert f"- `{DYNAMIC}` (not yet re-run) — newly broken" in comment
    # The proposal's scope is the backend's, its reason names the exporter, its comment the backend.
    assert '["fakert.dynamic"]' in comment and "+# Fakert, dynamic-shape only." in comment
    assert "Fakert export (dynamic shapes) fails at stage" in comment


def test_the_job_summarys_grid_has_its_columns(report):
    summary = render_summary(report)
    assert "| model class | fk st | fk dyn |\n|---|---|---|\n| BertModel | ✅ | ❌ |" in summary
    assert "fk = Fakert" in summary  # the grid's legend


def test_the_dashboard_data_has_its_label_and_colour(report):
    data = build_data([NightlyReport(report, "r")])
    assert data["backends"][-1] == "fakert" and data["colours"]["fakert"] == FAKERT.colour
    assert [(column["name"], column["abbr"]) for column in data["columns"]] == [
        ("test_fakert_export_static", "fk"),
        ("test_fakert_export_dynamic", "fk"),
    ]
    assert data["rates"] == [{"fakert": [1, 2]}]  # its line in the pass-rate plot


TARGETED = registry.Backend(
    "fakedel",
    word="fakedel",
    label="fd",
    exporter="Fakedel",
    described="Fakedel",
    runner="fakert",
    targets=(("fastcore", "Fakedel fastcore target"),),
    tolerance=(2e-3, 3e-3),
)


def test_a_declared_default_judges_as_own_kernels_with_named_outputs(fakert):
    cell = Cell("BertModel", "fakert", "static")
    assert rule_for(cell) == Rule("values", names=True, atol=1e-3, rtol=1e-3, mask=True, check_device=False)
    assert rule_for(cell, "values-1") == Rule("values", names=True, atol=1e-3, rtol=1e-3, mask=True, check_device=False)
    assert cell.target is None and Cell.parse(STATIC).target is None


def test_a_declared_target_and_tolerance_reach_the_grammar_and_the_judge():
    with registry.registered(TARGETED):
        name = "BertModel::test_fakedel_export_static_fastcore"
        assert Cell.parse(name) == Cell("BertModel", "fakedel", "static", target="fastcore")
        assert [
            cell.id for cell in cells_for("BertModel", generative=False, backends=["fakedel"], targets=["fastcore"])
        ] == [
            name,
            "BertModel::test_fakedel_export_dynamic_fastcore",
        ]
        assert rule_for(Cell.parse(name), "values-1").atol == 2e-3
        assert rule_for(Cell.parse(name), "values-1").rtol == 3e-3
        with pytest.raises(CellIdError, match="unknown Fakedel target 'xnnpack'"):
            Cell.parse("BertModel::test_fakedel_export_static_xnnpack")


def test_a_declared_target_is_walked_after_the_backend_and_its_comparison_reaches_the_scopes():
    generic = registry.Backend("fakegen", word="fakegen", label="fg", exporter="Fg", described="Fg", runner="fakert")
    with registry.registered(TARGETED, generic):
        targeted = Cell("BertModel", "fakedel", "dynamic", target="fastcore")
        assert skip_scopes(targeted) == list(dict.fromkeys(_walk(True, "fakedel") + _walk(True, "fastcore")))
        # Defaults: named outputs and own kernels, so a forward cell's exactness walks its name, a generate one has none.
        assert exactness_scopes(Cell("BertModel", "fakegen", "static")) == [
            exactness_scope(s) for s in _walk(False, "fakegen")
        ]
        assert exactness_scopes(Cell("BertModel", "fakegen", "static", "generate", "dynamic")) is None


def _walk(dynamic: bool, backend: str) -> list[str]:
    return export_scopes(generate=False, dynamic=dynamic, backend=backend, static_cache=False)
