"""Observed impact (bot/select/footprints.py): a change's base lines → the cells whose recorded footprint executed them.

Base texts are the installed Transformers' own modeling files; the base-side line ranges come from a real git diff.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bot.results.baseline import Footprint, measured
from bot.results.baseline_json import dumps
from bot.select.changes import changed_base_lines, merge_base, parse_base_hunks, read_files
from bot.select.footprints import FootprintsError, load_footprints, observed_impact
from tests.e2e.checkout import commit_all, git, write

PACKAGE = Path(importlib.util.find_spec("transformers").origin).parent
BERT = "src/transformers/models/bert/modeling_bert.py"
LAYERS = "src/transformers/modeling_layers.py"
LLAMA = "src/transformers/models/llama/modeling_llama.py"
TEXTS = {
    path: (PACKAGE / path.removeprefix("src/transformers/")).read_text(encoding="utf-8") for path in (BERT, LAYERS)
}
FOOTPRINTS = {
    "BertModel::test_torch_export_static": {
        f"{BERT}::BertSelfAttention.forward",
        f"{BERT}::BertModel.forward",
        f"{LAYERS}::GradientCheckpointingLayer.__call__",
    },
    "BertModel::test_onnx_export_static": {f"{BERT}::BertModel.forward", f"{LAYERS}::<module>"},
    "LlamaModel::test_torch_export_static": {f"{LLAMA}::LlamaModel.forward", f"{LAYERS}::<module>"},
}


def line_of(path: str, needle: str, after: str = "") -> int:
    """The 1-based line of the first `needle` after the first `after` in the base text."""
    lines = TEXTS[path].splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i in range(start, len(lines)) if needle in lines[i]) + 1


def test_a_change_inside_a_function_selects_the_cells_that_executed_it():
    forward = line_of(BERT, "def forward", after="class BertSelfAttention")
    impact = observed_impact(FOOTPRINTS, TEXTS, {BERT: [(forward + 3, forward + 4)]})
    assert impact == {
        BERT: {"BertModel::test_torch_export_static": "executed modeling_bert.py::BertSelfAttention.forward"}
    }


def test_a_change_at_module_level_selects_every_cell_that_executed_the_file():
    imports = line_of(LAYERS, "import")
    impact = observed_impact(FOOTPRINTS, TEXTS, {LAYERS: [(imports, imports)]})
    assert set(impact[LAYERS]) == set(FOOTPRINTS)
    assert (
        impact[LAYERS]["LlamaModel::test_torch_export_static"]
        == "executed modeling_layers.py (its module level changed)"
    )


def test_a_file_no_cell_executed_is_left_to_the_import_graph_and_unexecuted_code_selects_none():
    pooler = line_of(BERT, "def forward", after="class BertPooler")
    impact = observed_impact(
        FOOTPRINTS,
        TEXTS,
        {"src/transformers/models/gpt2/modeling_gpt2.py": [(10, 12)], BERT: [(pooler + 1, pooler + 1)]},
    )
    assert impact == {BERT: {}}  # cells ran modeling_bert.py, none ran BertPooler.forward


def test_an_insertion_and_a_missing_base_text_are_judged_conservatively():
    forward = line_of(BERT, "def forward", after="class BertSelfAttention")
    inserted = observed_impact(FOOTPRINTS, TEXTS, {BERT: [(forward + 3, forward + 2)]})  # after line forward + 2
    assert list(inserted[BERT]) == ["BertModel::test_torch_export_static"]
    unknown = observed_impact(FOOTPRINTS, {}, {BERT: [(1, 1)]})
    assert set(unknown[BERT]) == {"BertModel::test_torch_export_static", "BertModel::test_onnx_export_static"}
    broken = observed_impact(FOOTPRINTS, {BERT: "def (:\n"}, {BERT: [(1, 1)]})
    assert set(broken[BERT]) == set(unknown[BERT])


def test_base_lines_from_a_real_diff_follow_the_base_numbering(tmp_path):
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    source = "import os\n\n\nclass A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n"
    write(repo / "src/m.py", source)
    write(repo / "src/gone.py", "x = 1\n")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    changed = source.replace("return 2", "return 3").replace("import os\n", "import os\nimport sys\n")
    write(repo / "src/m.py", changed)
    write(repo / "src/new.py", "y = 2\n")
    (repo / "src/gone.py").unlink()
    commit_all(repo, "pr")
    ranges = changed_base_lines(repo, "main", "pr")
    assert ranges == {
        "src/m.py": [(2, 1), (9, 9)],
        "src/gone.py": [(1, 1)],
    }  # an insertion after line 1; new.py has no base
    base = merge_base(repo, "main", "pr")
    texts = read_files(repo, base, ranges)
    footprints = {"A::test_onnx_export_static": {"src/m.py::A.g"}, "B::test_onnx_export_static": {"src/m.py::A.f"}}
    impact = observed_impact(footprints, texts, ranges)
    assert set(impact["src/m.py"]) == {
        "A::test_onnx_export_static",
        "B::test_onnx_export_static",
    }  # the import: module level
    assert observed_impact(footprints, texts, {"src/m.py": [(9, 9)]}) == {
        "src/m.py": {"A::test_onnx_export_static": "executed m.py::A.g"}
    }
    assert parse_base_hunks("--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+x\n") == {}


def test_footprints_load_from_main_s_baseline_and_a_foreign_file_is_refused(tmp_path):
    state = measured_state()
    (tmp_path / "baseline.json").write_text(dumps(state))
    assert load_footprints(tmp_path) == {
        "BertModel::test_torch_export_static": frozenset(FOOTPRINTS["BertModel::test_torch_export_static"])
    }
    old = json.loads(dumps(state))
    for key in ("functions", "groups", "shared_groups", "footprints"):
        del old[key]
    (tmp_path / "v2.json").write_text(json.dumps({**old, "version": 2}))
    assert load_footprints(tmp_path / "v2.json") == {}
    (tmp_path / "bad.json").write_text(json.dumps({**json.loads(dumps(state)), "groups": [[10**6]]}))
    with pytest.raises(FootprintsError, match="groups"):
        load_footprints(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text("[]")
    with pytest.raises(FootprintsError, match="not an export-bot baseline"):
        load_footprints(tmp_path / "other.json")


def measured_state():
    from bot.cells import Cell
    from bot.results.model import ResultSet

    state = measured(ResultSet(), commit="a" * 40, time="2026-12-05T00:00:00Z", run_id=1, source="sweep", segment=None)
    cell = Cell.parse("BertModel::test_torch_export_static")
    footprint = Footprint("a" * 40, "2026-12-05T00:00:00Z", 1, "sweep", frozenset(FOOTPRINTS[cell.id]))
    return type(state)(footprints={cell: footprint})
