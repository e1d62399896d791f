"""The import graph on the real checkout: Transformers 5.23.0 and upstream's testers, as tests/run/test_parity_upstream.py builds it.

What a change outside a model folder selects there, per file the export gate cares about; the
checkout is assembled once for the module (seconds) and its graph read once.
"""

from __future__ import annotations

import time

import pytest

from bot.jobs.select import select_job
from bot.results.baseline_json import dumps
from bot.run.shard import estimate
from bot.select.catalog import load_catalog
from bot.select.changes import Change
from bot.select.pipeline import graph_at, tree_at
from bot.select.reach import SAMPLE_BUDGET_MINUTES
from bot.select.rules import decide
from bot.select.tree import ModelTree
from bot.settings import Settings
from tests.run.test_parity_upstream import real_checkout  # noqa: F401  (the module-scoped checkout fixture)
from tests.select.conftest import git

T = "src/transformers"
TESTERS = ("bert", "gpt2", "llama", "t5", "vit", "whisper")  # the types upstream's real testers cover


@pytest.fixture(scope="module")
def head(real_checkout):  # noqa: F811
    started = time.monotonic()
    graph = graph_at(real_checkout, "main")
    print(f"import graph of {len(graph.imports):,} files read in {time.monotonic() - started:.1f} s")
    return graph, tree_at(real_checkout, "main"), load_catalog(Settings())


def select(head, *paths):
    graph, tree, catalog = head
    changes = [Change("M", p) for p in paths]
    return decide(changes, tree, ModelTree({}), Settings(), catalog, graph=graph, seconds=estimate)


def kinds(selection) -> set[str]:
    return {r.kind for rs in selection.reasons.values() for r in rs}


def test_a_change_to_modeling_layers_samples_the_zoo_end_to_end(real_checkout):  # noqa: F811
    git(real_checkout, "checkout", "-q", "-b", "layers", "main")
    with (real_checkout / T / "modeling_layers.py").open("a") as module:
        module.write("_HARMLESS = 1  # a code line: a comment alone selects nothing\n")
    git(real_checkout, "commit", "-qam", "a harmless line")
    git(real_checkout, "checkout", "-q", "main")
    # The select job, as the workflows run it: the sample is costed by the shard planner's estimates.
    document = select_job(real_checkout, "main", "layers", Settings(), shards=4, shard_minutes=40)
    sample = document["sample"]
    assert sample["reached_classes"] == document["counts"]["full_sweep_classes"] > 1500  # every class
    assert set(document["classes"]) == set(sample["sampled"]) and document["shard_count"] == 1
    assert document["classes"]["BertModel"] == [
        {"kind": "imports", "detail": "models/bert/modeling_bert.py imports modeling_layers.py"}
    ]
    core = load_catalog(Settings()).core
    assert tuple(sample["sampled"][: len(core)]) == core and len(sample["sampled"]) > len(core)
    assert sample["minutes"] <= SAMPLE_BUDGET_MINUTES and sample["paths"] == [f"{T}/modeling_layers.py"]
    assert document["summary"].endswith("sampled here; the rest is measured on main after the merge")
    # Pushed to main, the same change makes the sweep of the rest due.
    [due] = document["full_sweep_due"]
    assert due.startswith(f"imports: {T}/modeling_layers.py reached {sample['reached_classes']:,} classes")


def test_rope_utils_reaches_the_models_through_their_configurations(head):
    selection = select(head, f"{T}/modeling_rope_utils.py")
    assert selection.sample and selection.sample.reached > 1500
    assert [r.detail for r in selection.reasons["LlamaForCausalLM"]] == [
        "models/llama/configuration_llama.py imports modeling_rope_utils.py"
    ]


@pytest.mark.parametrize(
    "path, types, via",
    [
        # The judge: test_modeling_common imports the export mixin, every tester imports it.
        ("tests/exporters/test_export.py", TESTERS, "tests/exporters/test_export.py"),
        ("tests/test_modeling_common.py", TESTERS, "tests/test_modeling_common.py"),
        # llama's and gpt2's testers take CausalLMModelTester from it.
        ("tests/causal_lm_tester.py", ("llama", "gpt2"), "tests/causal_lm_tester.py"),
    ],
)
def test_the_testers_modules_reach_the_classes_of_the_testers_that_import_them(head, path, types, via):
    _, tree, _ = head
    selection = select(head, path)
    assert selection.sample is None and kinds(selection) == {"imports"}
    assert set(selection.reasons) == {c for t in types for c in tree.classes(t)}
    llama = selection.reasons["LlamaForCausalLM"][0].detail
    assert llama.startswith("tests/models/llama/test_modeling_llama.py imports") and llama.endswith(via)


def test_a_models_own_tester_selects_its_classes_as_changed(head):
    _, tree, _ = head
    selection = select(head, "tests/models/llama/test_modeling_llama.py")
    assert set(selection.reasons) == set(tree.classes("llama")) and kinds(selection) == {"changed"}


def test_lazy_inits_and_modules_only_an_init_imports_reach_no_class(head):
    # gpt2's init is lazy: it defines nothing, so who takes a gpt2 name takes it from modeling_gpt2.py.
    # dummy_pt_objects.py is imported by the top-level init alone, which is reached but not followed.
    paths = (f"{T}/models/gpt2/__init__.py", f"{T}/utils/dummy_pt_objects.py")
    selection = select(head, *paths)
    assert selection.cells == () and selection.ignored == paths


def test_main_s_footprints_narrow_a_shared_change_to_the_cells_that_ran_it(real_checkout, tmp_path):  # noqa: F811
    # The sample above is what the import graph can do for rope utils (every class reaches it); main's
    # recorded footprints say which cells ran the changed function, and only those run.
    rope = f"{T}/modeling_rope_utils.py"
    scaled = "LlamaForCausalLM::test_torch_export_static"
    footprints = {
        scaled: {f"{rope}::_compute_linear_scaling_rope_parameters", f"{rope}::<module>"},
        "BertModel::test_torch_export_static": {f"{rope}::<module>"},  # imported it, ran none of it
    }
    (tmp_path / "baseline.json").write_text(dumps(_state(footprints)))
    source = (real_checkout / rope).read_text(encoding="utf-8")
    anchor = "def _compute_linear_scaling_rope_parameters("
    body = source.index("\n", source.index('"""', source.index('"""', source.index(anchor)) + 3)) + 1
    git(real_checkout, "checkout", "-q", "-b", "rope", "main")
    (real_checkout / rope).write_text(source[:body] + "    _changed = 1\n" + source[body:], encoding="utf-8")
    git(real_checkout, "commit", "-qam", "a line inside one rope function")
    git(real_checkout, "checkout", "-q", "main")
    document = select_job(real_checkout, "main", "rope", Settings(), footprints=tmp_path)
    assert document["cells"] == [scaled] and document["sample"] is None
    assert document["classes"]["LlamaForCausalLM"] == [
        {"kind": "footprint", "detail": "executed modeling_rope_utils.py::_compute_linear_scaling_rope_parameters"}
    ]
    # Without main's footprints, the same change reaches every class and runs the sample.
    assert select_job(real_checkout, "main", "rope", Settings())["sample"]["reached_classes"] > 1500


def _state(footprints: dict[str, set[str]]):
    from bot.cells import Cell
    from bot.results.baseline import Footprint, measured
    from bot.results.model import ResultSet

    state = measured(ResultSet(), commit="a" * 40, time="2026-12-05T00:00:00Z", run_id=1, source="sweep", segment=None)
    prints = {
        Cell.parse(cell): Footprint("a" * 40, "2026-12-05T00:00:00Z", 1, "sweep", frozenset(names))
        for cell, names in footprints.items()
    }
    return type(state)(footprints=prints)


def test_code_most_recorded_cells_ran_is_sampled_like_an_import_reach(head):
    # A layer base every model runs sits in nearly every footprint: precise, but the whole sweep.
    graph, tree, catalog = head
    layers = f"{T}/modeling_layers.py"
    classes = sorted(c for cs in tree.classes_by_type.values() for c in cs)[:300]
    observed = {layers: {f"{c}::test_torch_export_static": "executed modeling_layers.py::f" for c in classes}}
    selection = decide(
        [Change("M", layers)], tree, ModelTree({}), Settings(), catalog, observed=observed, seconds=estimate
    )
    assert selection.sample and selection.sample.reached == 300 and selection.sample.paths == (layers,)
    assert set(selection.reasons) == set(selection.sample.sampled) < set(classes)
    assert {c.id for c in selection.cells} <= set(observed[layers]) and kinds(selection) == {"footprint"}
    assert selection.sample.minutes <= SAMPLE_BUDGET_MINUTES
    # Below the threshold every recorded cell runs.
    few = {layers: dict(list(observed[layers].items())[:20])}
    selection = decide([Change("M", layers)], tree, ModelTree({}), Settings(), catalog, observed=few, seconds=estimate)
    assert selection.sample is None and {c.id for c in selection.cells} == set(few[layers])
