"""Reached files to model classes, the sample of a change reaching most, observed footprints: on hand-made graphs."""

from __future__ import annotations

import pytest

from bot.cells import Cell, cells_for
from bot.select import reach
from bot.select.catalog import Catalog
from bot.select.changes import Change
from bot.select.due import sweep_reasons
from bot.select.imports import ImportGraph
from bot.select.reach import SAMPLE_ABOVE, SAMPLE_BUDGET_MINUTES, choose_sample, reached_type
from bot.select.rules import decide
from bot.select.tree import ModelTree
from bot.settings import Settings

M = "src/transformers/models"
LAYERS = "src/transformers/modeling_layers.py"
COMMON = "tests/test_modeling_common.py"
EXPORT = "tests/exporters/test_export.py"


def modeling(model_type: str) -> str:
    return f"{M}/{model_type}/modeling_{model_type}.py"


def suite_of(model_type: str) -> str:
    return f"tests/models/{model_type}/test_modeling_{model_type}.py"


def small():
    """Three types: bert and gpt2 import modeling_layers; the bert and llama testers import the common tester."""
    tree = ModelTree(
        {"bert": ("BertModel", "BertForMaskedLM"), "gpt2": ("GPT2LMHeadModel",), "llama": ("LlamaForCausalLM",)}
    )
    graph = ImportGraph(
        {
            modeling("bert"): frozenset({LAYERS}),
            modeling("gpt2"): frozenset({LAYERS}),
            COMMON: frozenset({EXPORT}),
            suite_of("bert"): frozenset({COMMON, modeling("bert")}),
            suite_of("llama"): frozenset({COMMON}),
        }
    )
    catalog = Catalog({}, None, ("BertModel", "LlamaForCausalLM"), families={"BertModel": "text-encoder"})
    return tree, graph, catalog


def select(paths, tree, graph, catalog, **given):
    changes = [Change("M", p) for p in paths]
    return decide(changes, tree, ModelTree({}), Settings(), catalog, graph=graph, **given)


def kinds(selection) -> dict[str, list[tuple[str, str]]]:
    return {c: [(r.kind, r.detail) for r in rs] for c, rs in selection.reasons.items()}


@pytest.mark.parametrize(
    "path, model_type",
    [
        (modeling("bert"), "bert"),
        (f"{M}/bert/configuration_bert.py", "bert"),
        (f"{M}/bert/tokenization_bert.py", None),
        (suite_of("llama"), "llama"),
        ("tests/models/llama/__init__.py", "llama"),
        ("tests/models/llama/fixtures/x.py", None),
        (COMMON, None),
    ],
)
def test_the_files_that_speak_for_a_type(path, model_type):
    assert reached_type(path) == model_type


def test_a_shared_module_selects_the_classes_of_the_modules_that_import_it():
    tree, graph, catalog = small()
    selection = select([LAYERS], tree, graph, catalog)
    assert kinds(selection) == {
        "BertModel": [("imports", "models/bert/modeling_bert.py imports modeling_layers.py")],
        "BertForMaskedLM": [("imports", "models/bert/modeling_bert.py imports modeling_layers.py")],
        "GPT2LMHeadModel": [("imports", "models/gpt2/modeling_gpt2.py imports modeling_layers.py")],
    }
    assert selection.sample is None and selection.ignored == ()
    assert {c.model_class for c in selection.cells} == {"BertModel", "BertForMaskedLM", "GPT2LMHeadModel"}


def test_tests_reach_their_types_and_a_types_own_test_file_is_a_change_to_it():
    tree, graph, catalog = small()
    selection = select([EXPORT], tree, graph, catalog)
    assert kinds(selection)["LlamaForCausalLM"] == [
        ("imports", f"{suite_of('llama')} imports {COMMON} imports {EXPORT}")
    ]
    assert set(selection.reasons) == {"BertModel", "BertForMaskedLM", "LlamaForCausalLM"}
    own = select([suite_of("llama")], tree, graph, catalog)
    assert kinds(own) == {"LlamaForCausalLM": [("changed", suite_of("llama"))]}


def test_a_file_reaching_no_class_stays_ignored_and_shared_paths_keep_selecting_core():
    tree, graph, catalog = small()
    selection = select(["src/transformers/models/bert/__init__.py", "README.md"], tree, graph, catalog)
    assert selection.cells == () and selection.ignored == ("src/transformers/models/bert/__init__.py", "README.md")
    # modeling_utils.py is a shared path: the core set, the graph is not asked.
    graph = ImportGraph({modeling("gpt2"): frozenset({"src/transformers/modeling_utils.py"})})
    shared = select(["src/transformers/modeling_utils.py"], tree, graph, catalog)
    assert {c: [k for k, _ in rs] for c, rs in kinds(shared).items()} == {
        "BertModel": ["core"],
        "LlamaForCausalLM": ["core"],
    }


def test_an_observed_file_runs_exactly_its_cells_and_skips_the_graph():
    tree, graph, catalog = small()
    seen = {"BertModel::test_onnx_export_static": "ran modeling_layers.py:GradientCheckpointingLayer.__call__"}
    selection = select([LAYERS], tree, graph, catalog, observed={LAYERS: seen})
    assert [c.id for c in selection.cells] == ["BertModel::test_onnx_export_static"]
    assert kinds(selection) == {"BertModel": [("footprint", seen["BertModel::test_onnx_export_static"])]}
    # Observed to run no cell: nothing runs and the file is listed as ignored; another file still uses the graph.
    nothing = select([LAYERS, EXPORT], tree, graph, catalog, observed={LAYERS: {}})
    assert nothing.ignored == (LAYERS,) and set(nothing.reasons) == {"BertModel", "BertForMaskedLM", "LlamaForCausalLM"}
    bad = select([LAYERS], tree, graph, catalog, observed={LAYERS: {"not a cell": "?"}})
    assert bad.cells == () and any("names no cell" in note for note in bad.notes)


def many(types: int = SAMPLE_ABOVE + 20):
    """`types` types of one class each, all importing modeling_layers.py; four families."""
    names = [f"t{i:03d}" for i in range(types)]
    tree = ModelTree({t: (f"T{t}Model",) for t in names} | {"big": ("BigModel", "BigForCausalLM", "BigForX")})
    graph = ImportGraph({modeling(t): frozenset({LAYERS}) for t in [*names, "big"]})
    families = {f"T{t}Model": ("text-encoder", "decoder", "vision", "audio")[i % 4] for i, t in enumerate(names)}
    families |= {"BigModel": "decoder", "BigForCausalLM": "decoder", "BigForX": "decoder"}
    catalog = Catalog({"BigForCausalLM": True}, None, ("Tt000Model", "BigForCausalLM"), families=families)
    return tree, graph, catalog


def seconds(cell: Cell) -> float:
    return 60.0 if cell.generate else 15.0


def test_a_change_reaching_most_classes_runs_a_bounded_sample_and_says_so():
    tree, graph, catalog = many()
    selection = select([LAYERS], tree, graph, catalog, seconds=seconds)
    sample = selection.sample
    assert sample.reached == SAMPLE_ABOVE + 23 and sample.paths == (LAYERS,)
    # The reached core classes first, then one class a family (most reached classes first, then by
    # name: decoder, audio, text-encoder, vision), of its type with the most reached classes that the
    # sample lacks: big is the core's already, so decoder takes t001, text-encoder t004 past the core's t000.
    assert sample.sampled == ("Tt000Model", "BigForCausalLM", "Tt001Model", "Tt003Model", "Tt004Model", "Tt002Model")
    assert set(selection.reasons) == set(sample.sampled)
    cost = sum(seconds(c) for m in sample.sampled for c in cells_for(m, generative=m == "BigForCausalLM")) / 60
    assert sample.minutes == pytest.approx(cost) and cost <= SAMPLE_BUDGET_MINUTES
    assert selection.summary.endswith(
        f"this change reaches {SAMPLE_ABOVE + 23:,} model classes; 6 sampled here; "
        "the rest is measured on main after the merge"
    )
    assert selection.to_json()["sample"]["budget_minutes"] == SAMPLE_BUDGET_MINUTES
    # On a push, the rest is the sweep's.
    assert sweep_reasons([LAYERS], Settings(), sample=sample) == (
        f"imports: {LAYERS} reached {SAMPLE_ABOVE + 23:,} classes, 6 sampled",
    )
    # At the threshold, everything reached runs.
    tree, graph, catalog = many(SAMPLE_ABOVE - 3)
    assert select([LAYERS], tree, graph, catalog, seconds=seconds).sample is None


def test_the_budget_bounds_the_sample_whatever_the_classes_cost():
    tree, graph, catalog = many()
    reached = {c: t for t, cs in tree.classes_by_type.items() for c in cs}
    dear = lambda c: 30 * 60.0  # noqa: E731  (half an hour of CPU a class)
    picked, minutes = choose_sample(reached, catalog, dear)
    assert len(picked) == int(SAMPLE_BUDGET_MINUTES // 30) and minutes <= SAMPLE_BUDGET_MINUTES
    assert picked == choose_sample(dict(reversed(reached.items())), catalog, dear)[0]  # deterministic
    assert choose_sample(reached, catalog)[1] == 0.0  # no cell times: bounded by the families alone
    assert reach.describe(("tests/a.py", "src/transformers/b.py")) == "tests/a.py imports b.py"
