"""A realistic Transformers-layout git repository built from the installed package's own model files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bot.models.index import installed_models_dir
from bot.select.catalog import Catalog
from tests.conftest import SKIPLISTS

MODELS = "src/transformers/models"
# llama and the types around it: mistral/qwen2 inherit from llama in their modular files,
# mixtral from mistral; dpr's modeling imports bert's at run time (the real tree's own
# example); gpt2 is imported by no other modeling module.
TYPES = ("llama", "mistral", "mixtral", "qwen2", "phi3", "gemma", "bert", "dpr", "gpt2")
KINDS = ("modeling_", "modular_", "configuration_")

# No modeling module of Transformers 5.x imports llama at run time (reuse goes through
# modular files), so two copied modules get one added line each, as older releases had:
# phi3 at module level (a run-time dependent), gemma under TYPE_CHECKING (not one).
PHI3_IMPORT = "from ..llama.modeling_llama import LlamaRMSNorm  # noqa: F401\n"
GEMMA_IMPORT = (
    "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from ..llama.modeling_llama import LlamaModel\n"
)

CATALOG = Catalog(
    generative={},
    buildable=frozenset({"LlamaForCausalLM", "BertModel", "GPT2LMHeadModel"}),
    core=("BertModel", "GPT2LMHeadModel", "LlamaForCausalLM"),
)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.invalid",
            "-c",
            "core.looseCompression=0",
            *args,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def copy_types(models_src: Path, models_dst: Path, types) -> None:
    for model_type in types:
        (models_dst / model_type).mkdir(parents=True, exist_ok=True)
        for path in sorted((models_src / model_type).glob("*.py")):
            if path.name.startswith(KINDS) or path.name == "__init__.py":
                shutil.copy2(path, models_dst / model_type / path.name)


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture(scope="session")
def base_repo(tmp_path_factory) -> Path:
    """The base commit on `main`: real model files, an exporters module, docs and the shipped skiplists."""
    repo = tmp_path_factory.mktemp("transformers")
    models = repo / MODELS
    copy_types(installed_models_dir(), models, TYPES)
    phi3 = models / "phi3" / "modeling_phi3.py"
    phi3.write_text(PHI3_IMPORT + phi3.read_text(encoding="utf-8"), encoding="utf-8")
    gemma = models / "gemma" / "modeling_gemma.py"
    gemma.write_text(gemma.read_text(encoding="utf-8") + GEMMA_IMPORT, encoding="utf-8")
    (models / "phi3" / "modular_phi3.py").unlink(missing_ok=True)  # keep phi3 a dependent only
    exporters = repo / "src/transformers/exporters"
    exporters.mkdir(parents=True)
    (exporters / "onnx.py").write_text('"""ONNX exporter."""\n', encoding="utf-8")
    (repo / "docs/source/en").mkdir(parents=True)
    (repo / "docs/source/en/export.md").write_text("# Export\n", encoding="utf-8")
    shutil.copytree(SKIPLISTS, repo / "skiplists")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "base")
    return repo


@pytest.fixture
def repo(base_repo: Path, tmp_path: Path) -> Path:
    """A fresh clone of the base on a `pr` branch; tests edit files and call `commit_all`."""
    clone = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(base_repo), str(clone)], check=True, capture_output=True)
    git(clone, "checkout", "-q", "-b", "pr")
    return clone
