"""A change of comments, docstrings or formatting only selects nothing: on plain texts, and on the real tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.select import select_cells
from bot.select.code_change import same_code
from bot.select.selection import NOTHING, UNCHANGED_CODE
from tests.conftest import ROOT
from tests.select.conftest import commit_all, git

SOURCE = '''"""A module."""

import torch  # the tensor library


class Layer(torch.nn.Module):
    """A layer."""

    def forward(self, x):
        """Add one."""
        return x + 1
'''

SAME = [
    SOURCE.replace("# the tensor library", "# torch, imported once"),  # a comment
    SOURCE.replace('"""Add one."""', '"""Add one to every element.\n\n        Returns a tensor."""'),  # a docstring
    SOURCE.replace('    """A layer."""\n\n', ""),  # a docstring removed
    SOURCE.replace("return x + 1", "return (x\n                + 1)"),  # formatting
]
CHANGED = [
    SOURCE.replace("x + 1", "x + 2"),  # one token
    SOURCE.replace('"""A layer."""', '"""A layer."""\n    name = "layer"'),  # a statement beside the docstring
    SOURCE.replace("import torch  # the tensor library", "import torch\nprint('loaded')"),
    SOURCE.replace("return x + 1", "return x +"),  # does not parse: nothing can be said, so it is changed
]


@pytest.mark.parametrize("after", SAME, ids=["comment", "docstring", "docstring removed", "formatting"])
def test_comments_docstrings_and_formatting_leave_the_code_the_same(after):
    assert same_code(SOURCE, after)


@pytest.mark.parametrize("after", CHANGED, ids=["token", "statement", "call", "syntax error"])
def test_any_other_edit_changes_the_code(after):
    assert not same_code(SOURCE, after)
    assert not same_code(after, SOURCE)


def test_a_string_statement_after_the_first_is_code_not_a_docstring():
    before = 'def f():\n    """Doc."""\n    "marker"\n    return 1\n'
    assert not same_code(before, before.replace('"marker"', '"other"'))


# The real tree: the Transformers 5.23.0 sdist with upstream's testers (tests/run/test_parity_upstream.py).
SDIST = ROOT / ".ci" / "cache" / "transformers-5.23.0.tar.gz"
BERT = "src/transformers/models/bert/modeling_bert.py"


@pytest.fixture(scope="module")
def real_tree(tmp_path_factory) -> Path:
    upstream = Path(os.environ.get("EXPORT_BOT_UPSTREAM") or ROOT.parent / "shared" / "upstream")
    missing = [str(p) for p in (upstream / "assemble.sh", SDIST) if not p.is_file()]
    if missing and os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI selects on the real tree, but {missing} are missing")
    if missing:
        pytest.skip(f"the real tree cannot be assembled: {missing} missing")
    out = tmp_path_factory.mktemp("real") / "transformers"
    subprocess.run(["bash", str(upstream / "assemble.sh"), str(SDIST), str(out)], check=True, capture_output=True)
    return out


def _edit(repo: Path, *replacements: tuple[str, str]) -> None:
    path = repo / BERT
    text = path.read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")


def test_on_the_real_tree_a_comment_a_docstring_and_formatting_in_bert_select_nothing(real_tree):
    git(real_tree, "checkout", "-q", "-B", "pr", "main")
    _edit(
        real_tree,
        (
            "class BertEmbeddings(nn.Module):",
            "# Word, position and token type embeddings.\nclass BertEmbeddings(nn.Module):",
        ),
        ('"""Construct the embeddings', '"""Build the embeddings'),
        ("logger = logging.get_logger(__name__)", "logger = logging.get_logger(\n    __name__,\n)"),
    )
    commit_all(real_tree, "comments, a docstring and formatting")
    selection = select_cells(real_tree, "main", "pr")
    assert selection.cells == () and selection.reasons == {}
    assert selection.unchanged_code == (BERT,)
    assert selection.summary == f"{NOTHING}; {BERT}: {UNCHANGED_CODE}"
    assert selection.to_json()["unchanged_code"] == [BERT]

    # One token of code on top: bert's classes and those of the types importing it run again.
    _edit(real_tree, ("padding_idx=config.pad_token_id", "padding_idx=None"))
    commit_all(real_tree, "one token")
    selection = select_cells(real_tree, "main", "pr")
    assert selection.unchanged_code == ()
    assert "BertModel" in selection.reasons and len(selection.cells) > 50
    assert {r.kind for r in selection.reasons["BertModel"]} == {"changed"}
