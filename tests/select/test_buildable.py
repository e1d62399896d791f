"""Selection on the installed Transformers' real model sources picks only classes the zoo can build.

A modeling change selects every model class its module exports (and its run-time dependents'):
each must be a class the catalogue lists as buildable, or the PR gets "not buildable" cells it
cannot fix. BERT pulls in DPR, whose abstract `DPRPretrained*` bases are no model classes and
whose `DPRContextEncoder` / `DPRReader` no auto mapping lists.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.models import catalog
from bot.models.index import installed_index, installed_models_dir
from bot.select import select_cells
from bot.select.catalog import load_catalog
from bot.settings import Settings
from tests.select.conftest import MODELS, commit_all, copy_types, git

# dpr's modeling module imports bert's at run time, so a BERT change selects DPR's classes too.
TYPES = ("bert", "dpr", "gemma", "qwen2_moe")
CHANGED = ("bert", "gemma", "qwen2_moe")
DPR_ABSTRACT = ("DPRPretrainedContextEncoder", "DPRPretrainedQuestionEncoder", "DPRPretrainedReader")
DPR_MODELS = ("DPRContextEncoder", "DPRQuestionEncoder", "DPRReader")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """The real modeling files of TYPES on `main`, and one branch per changed type touching its modeling file."""
    repo = tmp_path_factory.mktemp("checkout")
    copy_types(installed_models_dir(), repo / MODELS, TYPES)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    for model_type in CHANGED:
        git(repo, "checkout", "-q", "-b", model_type, "main")
        path = repo / MODELS / model_type / f"modeling_{model_type}.py"
        path.write_text(path.read_text(encoding="utf-8") + "\n_CHANGED = True\n", encoding="utf-8")
        commit_all(repo, f"change {model_type}")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    return repo


@pytest.mark.parametrize("model_type", CHANGED)
def test_a_modeling_change_selects_only_buildable_classes(checkout, model_type):
    settings = Settings()  # the default source: the zoo, and its shipped catalogue
    zoo = load_catalog(settings)
    assert zoo.buildable is not None
    selection = select_cells(checkout, "main", model_type, settings, zoo)
    classes = set(selection.reasons)
    assert classes and selection.cells
    entries = catalog.load().entries
    why = {
        c: entries[c].not_buildable if c in entries else "no catalogue entry" for c in classes if c not in zoo.buildable
    }
    assert why == {}, f"{model_type}: selected classes the zoo cannot build"
    assert selection.unbuildable == ()
    assert "not buildable" not in selection.summary


def test_bert_selects_dpr_models_but_not_its_abstract_bases(checkout):
    selection = select_cells(checkout, "main", "bert", Settings())
    assert set(DPR_MODELS) <= set(selection.reasons)
    assert not set(DPR_ABSTRACT) & set(selection.reasons)
    assert {r.kind for c in DPR_MODELS for r in selection.reasons[c]} == {"dependent"}


def test_installed_index_and_catalogue_agree_on_dpr():
    # The index (skiplists, /export-check) reads whole files, selection greps git: same classes.
    assert set(installed_index().classes_by_type["dpr"]) == set(DPR_MODELS)
    for name in ("DPRContextEncoder", "DPRReader"):
        entry = catalog.load().get(name)
        assert entry is not None and entry.buildable and entry.model_type == "dpr" and entry.tasks == ()
