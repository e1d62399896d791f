"""`export-bot run` with named cells: --selection narrowed by --backends/--shapes/--no-generate, and --rerun-of a report."""

from __future__ import annotations

import pytest

from bot.cells import Cell
from bot.cli.common import BotError
from bot.diff import diff
from bot.diff.model import write_report
from bot.jobs.run import NamedCells
from bot.jobs.run import plan_from_options as plan_run
from bot.results import read_results
from bot.select.selection_file import write_selection
from bot.settings import load_settings
from bot.skiplist.model import load_skiplists
from tests.conftest import SKIPLISTS
from tests.results.factory import Case, junit

ROW = [
    Cell.parse(i)
    for i in (
        "LlamaForCausalLM::test_torch_export_static",
        "LlamaForCausalLM::test_onnx_export_dynamic",
        "LlamaForCausalLM::test_onnx_export_generate_dynamic_static_cache",
        "LlamaForCausalLM::test_executorch_export_static_xnnpack",
    )
]


def plan(**options):
    defaults = dict(
        models=(),
        preset=None,
        selection_file=None,
        backends=(),
        shapes=(),
        generate=True,
        probe=False,
        shard=None,
        durations_file=None,
        source="zoo",
        skiplists_dir=SKIPLISTS,
        cell_timeout=None,
    )
    return plan_from_options(**{**defaults, **options})


def plan_from_options(*, selection_file=None, rerun_of=None, cell_ids=(), skiplists_dir, **options):
    """The plan `export-bot run` builds from these option values."""
    named = NamedCells(tuple(cell_ids), selection_file, rerun_of)
    return plan_run(settings=load_settings(), skiplists=skiplists_dir, named=named, **options)


def test_a_selection_runs_as_written_unless_narrowed(tmp_path):
    selection = tmp_path / "selection.json"
    write_selection(selection, ROW)
    assert list(plan(selection_file=selection).cells) == ROW
    narrowed = plan(selection_file=selection, backends=("onnx",), shapes=("dynamic",), generate=False)
    assert [c.id for c in narrowed.cells] == ["LlamaForCausalLM::test_onnx_export_dynamic"]


def test_rerun_of_runs_the_cells_a_report_still_needs_confirmed(tmp_path):
    base, head = tmp_path / "base.xml", tmp_path / "head.xml"
    base.write_text(junit([Case(c.id) for c in ROW]))
    head.write_text(
        junit([Case(ROW[0].id, "failed", "RuntimeError: boom", stage="export")] + [Case(c.id) for c in ROW[1:]])
    )
    report = diff(read_results([base]), read_results([head]), load_skiplists(SKIPLISTS))
    write_report(report, tmp_path / "report.json")
    rerun = plan(rerun_of=tmp_path / "report.json")
    assert list(rerun.cells) == [ROW[0]]


def test_named_cells_and_a_preset_do_not_mix(tmp_path):
    selection = tmp_path / "selection.json"
    write_selection(selection, ROW)
    with pytest.raises(BotError, match="leave out --models and --preset"):
        plan(selection_file=selection, preset="smoke")


def test_nothing_to_rerun_writes_an_empty_junit_without_a_session(tmp_path):
    from click.testing import CliRunner

    from bot.cli import main
    from bot.diff.model import Report

    write_report(Report(verdict="success", headline="fine", baseline=True), tmp_path / "report.json")
    out = tmp_path / "rerun.xml"
    result = CliRunner().invoke(
        main, ["run", "--rerun-of", str(tmp_path / "report.json"), "--junit", str(out), "--skiplists", str(SKIPLISTS)]
    )
    assert result.exit_code == 0, result.output
    results = read_results([out])
    assert not results.results and not results.problems


def planned(*args: str):
    """The plan `export-bot run ARGS…` would run, from the command's own option parsing, without running it."""
    from bot.cli.run import run

    params = run.make_context("run", [*args, "--skiplists", str(SKIPLISTS)]).params
    for unused in ("workers", "junit", "checkout"):
        params.pop(unused)
    params["selection_file"], params["durations_file"] = params.pop("selection"), params.pop("durations")
    return plan_from_options(**params)


@pytest.mark.parametrize(
    "cell_id",
    [
        "BertModel::test_onnx_export_dynamic",  # forward
        "LlamaForCausalLM::test_torch_export_generate_static",  # generate, dynamic cache
        "LlamaForCausalLM::test_openvino_export_generate_dynamic_static_cache",  # generate, static cache
        "ViTModel::test_executorch_export_static_xnnpack",  # ExecuTorch forward, one target
        "LlamaForCausalLM::test_executorch_export_generate_static_static_cache_xnnpack",
        "LlamaForCausalLM::test_executorch_export_generate_dynamic_mlx",  # named, so run even where mlx is absent
    ],
)
def test_a_failure_groups_repro_plans_exactly_its_cell(cell_id, monkeypatch):
    import shlex

    from bot.diff.groups import repro_command

    monkeypatch.delenv("EXPORT_BOT_DURATIONS", raising=False)
    args = shlex.split(repro_command(Cell.parse(cell_id), "zoo", probe=True))
    assert args[:2] == ["export-bot", "run"]
    repro = planned(*args[2:])
    assert [c.id for c in repro.cells] == [cell_id] and repro.probe and repro.source == "zoo"


def test_cells_run_as_named_in_order_without_duplicates(monkeypatch):
    monkeypatch.delenv("EXPORT_BOT_DURATIONS", raising=False)
    ids = [c.id for c in ROW]
    repro = planned("--cells", ",".join(ids[2:]), "--cells", ids[0], "--cells", ids[2], "--source", "zoo")
    assert [c.id for c in repro.cells] == [ids[2], ids[3], ids[0]]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--cells", "BertModel::test_onnx_export_huge"], "--cells: unknown shape 'huge'"),
        (["--cells", "BertModel::test_onnx_forward"], "--cells: 'test_onnx_forward': not a cell name"),
        (["--cells", "BertModel"], "--cells: 'BertModel': expected `ModelClass::test_name`"),
        (["--cells", "BertModel::test_onnx_export_static_xnnpack"], "--cells: only ExecuTorch cells have a target"),
        (["--cells", ","], "--cells: give at least one cell id"),
        (
            ["--cells", "LlamaForCausalLM::test_onnx_export_generate_static", "--no-generate"],
            "--cells LlamaForCausalLM::test_onnx_export_generate_static: left out by",
        ),
        (["--cells", "BertModel::test_onnx_export_static", "--models", "ViTModel"], "leave out --models and --preset"),
        (["--cells", "BertModel::test_onnx_export_static", "--rerun-of", "r.json"], "give only one"),
    ],
)
def test_cells_that_cannot_run_exactly_as_named_exit_2_with_one_line(tmp_path, options, message):
    from click.testing import CliRunner

    from bot.cli import main

    out = tmp_path / "out.xml"
    args = ["run", *options, "--source", "zoo", "--junit", str(out), "--skiplists", str(SKIPLISTS)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert line.startswith("error: ") and message in line, line
    assert not out.exists()  # refused before anything ran
