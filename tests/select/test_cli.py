"""`export-bot select`: JSON on stdout, the shard matrix, the selection file the run jobs read, errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bot.cells import Cell
from bot.cli import main
from bot.run.shard import select_shard
from bot.select.selection_file import SelectionFileError, read_selection, write_selection
from tests.results.factory import Case, junit
from tests.select.conftest import MODELS, commit_all, git

# A modeling module cut down to its class headers: selection reads the bases, not the bodies.
GPT2_SHRUNK = (
    "from ...modeling_utils import PreTrainedModel\n\n\n"
    "class GPT2PreTrainedModel(PreTrainedModel): ...\n\n\n"
    "class GPT2Model(GPT2PreTrainedModel): ...\n\n\n"
    "class GPT2LMHeadModel(GPT2PreTrainedModel): ...\n\n\n"
)


def run(*args: str):
    return CliRunner().invoke(main, ["select", *args], catch_exceptions=False)


def test_select_prints_cells_reasons_and_a_matrix_and_writes_the_selection(repo, tmp_path):
    (repo / f"{MODELS}/gpt2/modeling_gpt2.py").write_text(GPT2_SHRUNK + "__all__ = ['GPT2LMHeadModel', 'GPT2Model']\n")
    commit_all(repo, "gpt2")
    out = tmp_path / "selection.json"
    result = run("--repo", str(repo), "--base", "main", "--head", "pr", "--shards", "3", "--json", str(out))
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["classes"]["GPT2LMHeadModel"] == [{"kind": "changed", "detail": f"{MODELS}/gpt2/modeling_gpt2.py"}]
    assert document["matrix"] == {"shard": [1, 2, 3]} and document["shard_count"] == 3
    assert document["counts"]["cells"] == len(document["cells"]) > 0
    assert sorted(sum(document["shards"], [])) == sorted(document["cells"])
    # The run job reproduces shard I from the selection file alone.
    cells = read_selection(out)
    assert [c.id for c in cells] == document["cells"]
    assert [c.id for c in select_shard(cells, (2, 3))] == document["shards"][1]


def test_durations_balance_the_shards(repo, tmp_path):
    (repo / f"{MODELS}/gpt2/modeling_gpt2.py").write_text(GPT2_SHRUNK + "__all__ = ['GPT2Model']\n")
    commit_all(repo, "gpt2")
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuite><testcase classname="GPT2Model" name="test_onnx_export_static" time="500"/></testsuite>'
    )
    document = json.loads(
        run("--repo", str(repo), "--base", "main", "--head", "pr", "--shards", "2", "--durations", str(junit)).output
    )
    heavy = [s for s in document["shards"] if "GPT2Model::test_onnx_export_static" in s]
    assert heavy == [["GPT2Model::test_onnx_export_static"]]  # alone in its shard: it outweighs the rest


def test_durations_come_from_a_folder_named_in_the_environment_and_an_empty_one_is_unset(repo, tmp_path, monkeypatch):
    """The baseline's shards get EXPORT_BOT_DURATIONS: the previous sweep's folder, or '' on the first sweep."""
    (repo / f"{MODELS}/gpt2/modeling_gpt2.py").write_text(GPT2_SHRUNK + "__all__ = ['GPT2Model']\n")
    commit_all(repo, "gpt2")
    folder = tmp_path / "durations"
    folder.mkdir()
    (folder / "baseline-1.xml").write_text(
        '<testsuite><testcase classname="GPT2Model" name="test_onnx_export_static" time="500"/></testsuite>'
    )
    (folder / "baseline-2.xml").write_text("<testsuite/>")
    args = ("--repo", str(repo), "--base", "main", "--head", "pr", "--shards", "2")
    monkeypatch.setenv("EXPORT_BOT_DURATIONS", str(folder))
    weighed = json.loads(run(*args).output)["shards"]
    assert ["GPT2Model::test_onnx_export_static"] in weighed
    monkeypatch.setenv("EXPORT_BOT_DURATIONS", "")
    recorded = json.loads(run(*args).output)["shards"]
    assert recorded != weighed and ["GPT2Model::test_onnx_export_static"] not in recorded


def test_durations_come_from_mains_baseline_json_each_cells_newest_measurement(repo, tmp_path, monkeypatch):
    """`github baseline` writes baseline.json into the durations folder: its newest duration per cell weighs."""
    (repo / f"{MODELS}/gpt2/modeling_gpt2.py").write_text(GPT2_SHRUNK + "__all__ = ['GPT2Model']\n")
    commit_all(repo, "gpt2")
    folder = tmp_path / "durations"
    for n, seconds in ((1, "0.1"), (2, "500")):  # an old fast result, then the newest slow one
        xml = tmp_path / f"{n}.xml"
        xml.write_text(junit([Case("GPT2Model::test_onnx_export_static", time=seconds)]), encoding="utf-8")
        state = ("--state", str(folder)) if n > 1 else ()
        merged = CliRunner().invoke(
            main,
            ["baseline", "merge", *state, "--junit", str(xml), "--commit", str(n) * 40, "--run-id", str(n)]
            + ["--time", f"2026-12-0{n}T00:00:00Z", "--out", str(folder / "baseline.json")],
        )
        assert merged.exit_code == 0, merged.output
    monkeypatch.setenv("EXPORT_BOT_DURATIONS", str(folder))
    weighed = json.loads(run("--repo", str(repo), "--base", "main", "--head", "pr", "--shards", "2").output)["shards"]
    assert ["GPT2Model::test_onnx_export_static"] in weighed


def test_an_empty_selection_has_an_empty_matrix(repo):
    (repo / "docs/source/en/export.md").write_text("# changed\n")
    commit_all(repo, "docs")
    document = json.loads(run("--repo", str(repo), "--base", "main", "--head", "pr", "--shards", "4").output)
    assert document["summary"] == "no export-relevant changes"
    assert document["matrix"] == {"shard": []} and document["cells"] == []


def test_an_unknown_ref_is_one_line_and_exit_2(repo):
    result = CliRunner().invoke(main, ["select", "--repo", str(repo), "--base", "main", "--head", "nope"])
    assert result.exit_code == 2
    assert "rev-parse" in result.output and "Traceback" not in result.output


def test_selection_file_round_trip_and_errors(tmp_path):
    cells = [
        Cell.parse("BertModel::test_onnx_export_dynamic"),
        Cell.parse("GPT2LMHeadModel::test_torch_export_generate_static_static_cache"),
    ]
    path = tmp_path / "s.json"
    write_selection(path, cells, head_sha="abc")
    assert read_selection(path) == cells
    path.write_text('{"cells": ["BertModel::test_onnx_nope"]}')
    with pytest.raises(SelectionFileError, match=r"cells\[0\]"):
        read_selection(path)
    path.write_text("{")
    with pytest.raises(SelectionFileError, match=r"s.json:1:2"):
        read_selection(path)


def test_a_models_request_replaces_the_git_selection_and_fills_github_output(repo, tmp_path):
    (repo / "docs/source/en/export.md").write_text("# changed\n")
    commit_all(repo, "docs")
    output = tmp_path / "github_output"
    request = json.dumps({"kind": "models", "models": ["LlamaForCausalLM"], "backends": ["dynamo"], "pr": 7})
    result = run(
        "--repo",
        str(repo),
        "--base",
        "main",
        "--head",
        "pr",
        "--shards",
        "2",
        "--request",
        request,
        "--github-output",
        str(output),
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["cells"] == [
        "LlamaForCausalLM::test_torch_export_static",
        "LlamaForCausalLM::test_torch_export_dynamic",
    ]
    assert output.read_text().splitlines() == [
        'matrix={"shard": [1, 2]}',
        "count=2",
        "shards=2",
        "probe=false",
        "full=false",  # a request names cells: it changes no file of main
        "due=",
    ]


def test_a_failed_request_runs_exactly_the_cells_the_command_job_sent(repo, tmp_path):
    from bot.publish.command import Request

    cells = ("BertModel::test_onnx_export_static", "LlamaForCausalLM::test_torch_export_dynamic")
    request = Request("failed", cells=cells, pr=7, head_sha="a" * 40, comment_id=9).to_json()
    output = tmp_path / "github_output"
    args = ("--repo", str(repo), "--base", "main", "--head", "pr", "--request")
    result = run(*args, request, "--github-output", str(output))
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["cells"] == list(cells) and document["request"] == "failed"
    assert "count=2" in output.read_text().splitlines()
    hostile = json.dumps({"kind": "failed", "cells": ["Bert; rm -rf /"]})
    refused = run(*args, hostile)
    assert refused.exit_code == 2 and "cells[0] is not a cell id" in refused.output
    assert "Traceback" not in refused.output


def test_a_probe_request_keeps_the_git_selection_and_says_probe(repo, tmp_path):
    (repo / "docs/source/en/export.md").write_text("# changed\n")
    commit_all(repo, "docs")
    output = tmp_path / "github_output"
    result = run(
        "--repo",
        str(repo),
        "--base",
        "main",
        "--head",
        "pr",
        "--request",
        '{"kind": "probe"}',
        "--github-output",
        str(output),
    )
    assert json.loads(result.output)["summary"] == "no export-relevant changes"
    assert "probe=true" in output.read_text().splitlines()


def test_configured_backends_narrow_the_selection(repo):
    # Set on the base: the settings that judge a PR are the base's (tests/select/test_base_settings.py).
    (repo / "pyproject.toml").write_text('[tool.export-bot]\nbackends = ["dynamo"]\n')
    commit_all(repo, "gate on dynamo")
    git(repo, "branch", "-f", "main", "pr")
    (repo / f"{MODELS}/gpt2/modeling_gpt2.py").write_text(
        "class GPT2PreTrainedModel(PreTrainedModel): ...\n"
        "class GPT2Model(GPT2PreTrainedModel): ...\n"
        "class GPT2LMHeadModel(GPT2PreTrainedModel): ...\n"
        "__all__ = ['GPT2LMHeadModel', 'GPT2Model']\n"
    )
    commit_all(repo, "gpt2")
    result = run("--repo", str(repo), "--base", "main", "--head", "pr")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["cells"] and {Cell.parse(c).backend for c in document["cells"]} == {"dynamo"}
    assert document["counts"]["cells"] == len(document["cells"])
    assert document["summary"].startswith(f"{len(document['cells'])} cells")


# A library module two of the copied models import (`from ...pytorch_utils import Conv1D`, bert's helpers).
UTILS = "src/transformers/pytorch_utils.py"
UTILS_TEXT = (
    '"""Stand-in for the library\'s pytorch_utils."""\n\n\n'
    "class Conv1D:\n    def forward(self, x):\n        return x\n\n\n"
    "def apply_chunking_to_forward(forward_fn, *args):\n    return forward_fn(*args)\n"
)
GPT2_CELL = "GPT2LMHeadModel::test_torch_export_static"


def _utils_change(repo) -> None:
    """main gets pytorch_utils.py; `pr`, rebuilt on it, changes one line inside Conv1D.forward."""
    git(repo, "checkout", "-q", "main")
    (repo / UTILS).write_text(UTILS_TEXT, encoding="utf-8")
    commit_all(repo, "pytorch utils")
    git(repo, "checkout", "-q", "-B", "pr")
    (repo / UTILS).write_text(UTILS_TEXT.replace("return x\n", "return x * 1\n"), encoding="utf-8")
    commit_all(repo, "Conv1D.forward")


def _baseline(folder, footprints: dict[str, set[str]]) -> None:
    """Main's baseline.json as `export-bot github baseline --out` writes it, with these footprints."""
    from bot.results.baseline import Footprint, measured
    from bot.results.baseline_json import dumps
    from bot.results.model import ResultSet

    time = "2026-12-05T00:00:00Z"
    state = measured(ResultSet(), commit="a" * 40, time=time, run_id=1, source="sweep", segment=None)
    prints = {Cell.parse(c): Footprint("a" * 40, time, 1, "sweep", frozenset(n)) for c, n in footprints.items()}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "baseline.json").write_text(dumps(type(state)(footprints=prints)), encoding="utf-8")


def test_without_main_s_footprints_select_goes_by_the_import_graph_and_says_why(repo, tmp_path):
    """The PR gate's first runs: no baseline of main yet (or one without footprints) is no error."""
    from bot.select.base_settings import comment_notes

    _utils_change(repo)
    base, out = tmp_path / "base", tmp_path / "selection.json"
    args = ("--repo", str(repo), "--base", "main", "--head", "pr", "--footprints", str(base), "--json", str(out))

    def select_with(state) -> dict:
        if state is not None:
            _baseline(base, state)
        result = run(*args)
        assert result.exit_code == 0, result.output
        return json.loads(out.read_text(encoding="utf-8"))

    absent = select_with(None)  # `github baseline` found no state: it wrote nothing
    assert absent["footprints"] == {
        "baseline": str(base),
        "cells": 0,
        "not_available": f"no baseline of main at {base}: none recorded yet",
    }
    assert {r["kind"] for r in absent["classes"]["GPT2LMHeadModel"]} == {"imports"} and "BertModel" in absent["classes"]
    [note] = [n for n in absent["notes"] if n.startswith("main's footprints not available")]
    assert "1 changed file outside the model folders selected by the import graph" in note
    assert note in comment_notes(absent), "the comment lists it below the Selected: line"
    none_recorded = select_with({})  # a baseline from before footprints were recorded
    assert (
        none_recorded["footprints"]["not_available"]
        == "main's baseline records none yet: its next full sweep records them"
    )
    assert none_recorded["cells"] == absent["cells"]
    # With them, the one cell main saw running Conv1D.forward, and nothing to note.
    recorded = select_with(
        {GPT2_CELL: {f"{UTILS}::Conv1D.forward"}, "BertModel::test_torch_export_static": {f"{UTILS}::<module>"}}
    )
    assert recorded["cells"] == [GPT2_CELL] and recorded["footprints"] == {
        "baseline": str(base / "baseline.json"),
        "cells": 2,
        "not_available": None,
    }
    assert not comment_notes(recorded)


@pytest.mark.parametrize("damage", ["truncated", "foreign", "oversized"])
def test_a_baseline_that_is_there_but_unreadable_stops_select_with_exit_2(repo, tmp_path, damage):
    _utils_change(repo)
    state = tmp_path / "base" / "baseline.json"
    state.parent.mkdir()
    if damage == "oversized":
        with state.open("wb") as handle:
            handle.truncate(513 * 1024 * 1024)  # sparse: past the bounded reader's 512 MB, nothing written
    else:
        state.write_text('{"format": "export-bot-baseline", "cells": [' if damage == "truncated" else '{"cells": []}')
    result = CliRunner().invoke(
        main, ["select", "--repo", str(repo), "--base", "main", "--head", "pr", "--footprints", str(state.parent)]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert (
        str(state) in result.output
        and {"truncated": "cannot read", "foreign": "not an export-bot baseline", "oversized": "too large"}[damage]
        in result.output
    )


def test_without_main_s_footprints_a_change_they_would_not_decide_is_noted_nowhere(repo, tmp_path):
    """A docs change, or a model's own file: footprints would not have decided it, so nothing is said."""
    (repo / "docs/source/en/export.md").write_text("# changed\n")
    (repo / f"{MODELS}/gpt2/modeling_gpt2.py").write_text(GPT2_SHRUNK + "__all__ = ['GPT2Model']\n")
    commit_all(repo, "docs and gpt2")
    out = tmp_path / "selection.json"
    args = ("--repo", str(repo), "--base", "main", "--head", "pr", "--footprints", str(tmp_path / "base"))
    assert run(*args, "--json", str(out)).exit_code == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["footprints"]["not_available"] and document["classes"]["GPT2Model"][0]["kind"] == "changed"
    assert not [n for n in document["notes"] if n.startswith("main's footprints")]
