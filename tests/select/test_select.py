"""Selection on a real-file Transformers tree: each rule of docs/selection.md, renames, removals, and the narrow case."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from bot.cells import Cell, cells_for
from bot.models.index import installed_models_dir, read_all
from bot.select import select_cells
from bot.select.pipeline import tree_at
from bot.settings import Settings
from tests.select.conftest import CATALOG, MODELS, commit_all, git

SETTINGS = Settings()


def exported(model_type: str) -> set[str]:
    """The module's `__all__` classes that reach `PreTrainedModel` through its own classes (the whole file parsed).

    Less the abstract bases: `…PreTrainedModel`, and a `…Pretrained…` class (DPR's) whose body
    defines neither `__init__` nor `forward` and whose bases are all abstract.
    """
    source = (installed_models_dir() / model_type / f"modeling_{model_type}.py").read_text(encoding="utf-8")
    nodes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
    bases = {name: [ast.unparse(b) for b in n.bases] for name, n in nodes.items()}

    def is_model(name: str) -> bool:
        return name == "PreTrainedModel" or any(is_model(b) for b in bases.get(name, ()))

    def is_abstract(name: str) -> bool:
        if name == "PreTrainedModel" or name.endswith("PreTrainedModel"):
            return True
        node = nodes.get(name)
        methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)} if node else {"?"}
        return (
            ("Pretrained" in name or "PreTrained" in name)
            and not methods & {"__init__", "forward", "?"}
            and all(is_abstract(b) for b in bases[name])
        )

    return {c for c in read_all(source) if is_model(c) and not is_abstract(c)}


def touch(repo: Path, relative: str, text: str = "\n_TOUCHED = True\n") -> None:
    path = repo / relative
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def kinds(selection) -> dict[str, set[str]]:
    return {cls: {r.kind for r in rs} for cls, rs in selection.reasons.items()}


def row(model_class: str) -> set[Cell]:
    return set(cells_for(model_class, generative=CATALOG.is_generative(model_class)))


def test_modeling_llama_selects_llama_and_its_runtime_dependents(repo):
    touch(repo, f"{MODELS}/llama/modeling_llama.py")
    commit_all(repo, "llama")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)

    llama, phi3 = exported("llama"), exported("phi3")
    assert "LlamaForCausalLM" in llama and "Phi3ForCausalLM" in phi3
    assert kinds(selection) == {**{c: {"changed"} for c in llama}, **{c: {"dependent"} for c in phi3}}
    assert selection.reasons["Phi3Model"][0].detail == "phi3 imports llama"
    assert selection.reasons["LlamaModel"][0].detail == f"{MODELS}/llama/modeling_llama.py"
    # gemma's modeling imports llama only under TYPE_CHECKING, so it is not a dependent; its
    # modular file inherits from llama as mistral's and qwen2's do; mixtral's through mistral.
    expected = {"gemma": "llama", "mistral": "llama", "qwen2": "llama", "mixtral": "mistral"}
    assert selection.modular_descendants == expected
    assert set(selection.cells) == set().union(*(row(c) for c in llama | phi3))
    assert selection.unbuildable == tuple(sorted((llama | phi3) - CATALOG.buildable))
    # Said before running, so the comment can tell them apart from failures.
    unbuildable = len(selection.unbuildable)
    assert selection.summary.endswith(f"; {unbuildable} of them not buildable by the model source")
    assert selection.to_json()["unbuildable"] == list(selection.unbuildable)


def test_modular_descendants_run_when_configured(repo):
    touch(repo, f"{MODELS}/llama/modeling_llama.py")
    commit_all(repo, "llama")
    selection = select_cells(repo, "main", "pr", Settings(run_modular_descendants=True, dependents=False), CATALOG)
    assert {c for c, k in kinds(selection).items() if k == {"modular-descendant"}} == (
        exported("gemma") | exported("mistral") | exported("qwen2") | exported("mixtral")
    )
    assert not any("dependent" in k for k in kinds(selection).values())


def test_modular_mistral_selects_mistral(repo):
    touch(repo, f"{MODELS}/mistral/modular_mistral.py")
    commit_all(repo, "mistral modular")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert kinds(selection) == {c: {"changed"} for c in exported("mistral")}
    assert selection.modular_descendants == {"mixtral": "mistral", "qwen2": "mistral"}


def test_bert_change_selects_dpr_which_imports_it_at_run_time(repo):
    touch(repo, f"{MODELS}/bert/configuration_bert.py")
    commit_all(repo, "bert config")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert {c for c, k in kinds(selection).items() if k == {"dependent"}} == exported("dpr")


def test_a_modeling_change_selects_model_classes_only(repo):
    touch(repo, f"{MODELS}/bert/modeling_bert.py")
    commit_all(repo, "bert")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    changed = {c for c, k in kinds(selection).items() if "changed" in k}
    # BertLayer is in modeling_bert's `__all__` but is an nn.Module, not a PreTrainedModel: no cells.
    assert "BertModel" in changed and "BertForMaskedLM" in changed
    assert "BertLayer" not in changed and not any(c.model_class == "BertLayer" for c in selection.cells)
    assert changed == exported("bert")


def test_exporters_change_selects_the_core_preset(repo):
    touch(repo, "src/transformers/exporters/onnx.py")
    commit_all(repo, "exporters")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert kinds(selection) == {c: {"core"} for c in CATALOG.core}
    assert set(selection.cells) == set().union(*(row(c) for c in CATALOG.core))


def test_docs_only_change_selects_nothing_and_says_why(repo):
    touch(repo, "docs/source/en/export.md")
    touch(repo, f"{MODELS}/llama/__init__.py")
    commit_all(repo, "docs")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert selection.cells == () and not selection.reasons
    assert selection.summary == "no export-relevant changes"
    assert set(selection.ignored) == {"docs/source/en/export.md", f"{MODELS}/llama/__init__.py"}


def test_removing_one_skiplist_entry_selects_exactly_the_cells_it_covered(repo):
    path = repo / "skiplists/export_skips.toml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index("[dynamic]\n")
    target = next(i for i in range(start, len(lines)) if lines[i].startswith("Sam2Model = "))
    path.write_text("".join(lines[:target] + lines[target + 1 :]), encoding="utf-8")
    commit_all(repo, "unskip Sam2Model dynamic")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    # Sam2Model is forward-only; `dynamic` skips its dynamic cells on every backend.
    assert [c.id for c in selection.cells] == [
        "Sam2Model::test_executorch_export_dynamic_xnnpack",
        "Sam2Model::test_onnx_export_dynamic",
        "Sam2Model::test_openvino_export_dynamic",
        "Sam2Model::test_torch_export_dynamic",
    ]
    assert [r.kind for r in selection.reasons["Sam2Model"]] == ["skiplist"]
    assert "[dynamic] Sam2Model removed" in selection.reasons["Sam2Model"][0].detail


def test_moving_an_entry_selects_both_scopes_cells_and_a_reason_edit_selects_none(repo):
    path = repo / "skiplists/export_skips.toml"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = lines.index("[dynamic]\n")
    sam2 = next(i for i in range(start, len(lines)) if lines[i].startswith("Sam2Model = "))
    hiera = next(i for i in range(start, len(lines)) if lines[i].startswith("HieraForPreTraining = "))
    moved = lines.pop(sam2)
    lines[hiera] = 'HieraForPreTraining = "Reworded reason."\n'
    lines.insert(lines.index("[all]\n") + 1, moved)
    path.write_text("".join(lines), encoding="utf-8")
    commit_all(repo, "move Sam2Model to all, reword Hiera")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert set(selection.reasons) == {"Sam2Model"}
    assert set(selection.cells) == row("Sam2Model")  # `all` covers the whole row, `dynamic` a part of it
    assert {r.detail.split("] ")[1] for r in selection.reasons["Sam2Model"]} == {
        "Sam2Model added (moved)",
        "Sam2Model removed (moved)",
    }


def test_onnx_optimize_toggle_entry_covers_onnx_cells_only(repo):
    path = repo / "skiplists/onnx_disable_optimize.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[dynamic]\n", '[dynamic]\nBertModel = "toggle"\n', 1), encoding="utf-8")
    commit_all(repo, "toggle")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert [c.id for c in selection.cells] == ["BertModel::test_onnx_export_dynamic"]


def test_a_skiplist_that_does_not_parse_is_a_note_not_a_crash(repo):
    path = repo / "skiplists/onnx_disable_optimize.toml"
    path.write_text(path.read_text(encoding="utf-8") + '\n[dynamic]\nBertModel = "a second [dynamic]"\n')
    commit_all(repo, "broken")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert selection.cells == ()
    assert any(n.startswith("skiplist not compared: skiplists/onnx_disable_optimize.toml") for n in selection.notes)


def test_a_renamed_and_a_deleted_model_type(repo):
    git(repo, "mv", f"{MODELS}/gpt2", f"{MODELS}/gpt_two")
    git(repo, "rm", "-q", "-r", f"{MODELS}/dpr")
    commit_all(repo, "rename gpt2, remove dpr")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    # The folder moved but the module kept its name, so `gpt_two` has no modeling_gpt_two.py.
    assert set(selection.removed_types) == {"dpr", "gpt2"}
    assert any("`dpr` was removed" in n for n in selection.notes)
    assert selection.cells == ()


def test_a_renamed_modeling_module_selects_the_new_type(repo):
    old, new = f"{MODELS}/gpt2/modeling_gpt2.py", f"{MODELS}/gpt_two/modeling_gpt_two.py"
    (repo / new).parent.mkdir(parents=True)
    git(repo, "mv", old, new)
    commit_all(repo, "rename")
    assert "R" in git(repo, "diff", "--name-status", "-M", "main...pr")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert set(kinds(selection)) == exported("gpt2")
    assert selection.reasons["GPT2LMHeadModel"][0].detail == new


def test_one_model_nobody_imports_selects_its_cells_alone(repo):
    touch(repo, f"{MODELS}/gpt2/modeling_gpt2.py")
    commit_all(repo, "gpt2")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    assert set(selection.reasons) == exported("gpt2")
    assert set(selection.cells) == set().union(*(row(c) for c in exported("gpt2")))
    assert selection.modular_descendants == {}


def test_full_sweep_share_on_the_whole_real_tree(tmp_path):
    """Every installed model type's modeling module: one isolated model is at most 1 % of the sweep."""
    repo = tmp_path / "full"
    models = repo / MODELS
    for module in installed_models_dir().glob("*/modeling_*.py"):
        (models / module.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(module, models / module.parent.name / module.name)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    touch(repo, f"{MODELS}/gpt2/modeling_gpt2.py")
    commit_all(repo, "gpt2")
    selection = select_cells(repo, "main", "pr", SETTINGS, CATALOG)
    print(f"selected {len(selection.cells)} of {selection.full_sweep_cells} cells")
    assert set(selection.reasons) == exported("gpt2")
    assert selection.full_sweep_classes > 1000
    tree = tree_at(repo, "pr")
    every = {c for classes in tree.classes_by_type.values() for c in classes}
    # Layers and norms some modules export are not cells; audio tokenizers (PreTrainedAudioTokenizerBase) are.
    assert not {"BertLayer", "Qwen2RMSNorm", "LongformerSelfAttention"} & every
    assert {"DacModel", "EncodecModel", "BertModel", "LlamaForCausalLM"} <= every
    assert len(selection.cells) <= 0.01 * selection.full_sweep_cells


def test_an_entry_under_a_scope_only_the_checkout_s_walk_knows_selects_its_cells(repo, monkeypatch):
    """A checkout whose export module walks a scope the bot's own walk lacks (`dynamo.shapes`): the
    select job maps a skiplist edit to cells by that walk, not by the bot's own, which selects nothing."""
    from dataclasses import replace

    from bot.jobs.select import select_job

    exporters = repo / "tests" / "exporters"
    exporters.mkdir(parents=True)
    next_module = Path(__file__).parents[1] / "fixtures/transformers_checkout_next/tests/exporters/test_export.py"
    text = next_module.read_text(encoding="utf-8")
    walk = '        scopes.append(f"{backend}.dynamic" if dynamic else f"{backend}.static")\n'
    assert walk in text
    text = text.replace(walk, walk + '        scopes.append(f"{backend}.shapes")\n')
    (exporters / "test_export.py").write_text(text, encoding="utf-8")
    commit_all(repo, "the checkout's export module")
    git(repo, "branch", "-f", "main", "HEAD")
    path = repo / "skiplists/export_skips.toml"
    path.write_text(path.read_text(encoding="utf-8") + '\n["dynamo.shapes"]\nSam2Model = "Hiera guard."\n', "utf-8")
    commit_all(repo, "skip Sam2Model on dynamo, every shape")
    monkeypatch.chdir(repo)
    document = select_job(repo, "main", "pr", replace(SETTINGS, source="transformers-tests:."))
    assert document["cells"] == ["Sam2Model::test_torch_export_dynamic", "Sam2Model::test_torch_export_static"]
