"""The `/export-check` grammar (docs/github.md), parsed without I/O."""

from __future__ import annotations

import pytest

from bot.cells import BACKENDS
from bot.models.index import installed_index
from bot.publish import command
from bot.publish.command import MAX_SHOWN, Invalid, Request, code, fenced, fork_apply_reply, help_text, parse_command

CLASSES = frozenset({"BertModel", "LlamaForCausalLM", "ViTModel"})
TYPES = frozenset({"bert", "llama", "vit"})


def parse(body: str):
    return parse_command(body, model_classes=CLASSES, model_types=TYPES)


@pytest.mark.parametrize(
    "body,expected",
    [
        ("/export-check", Request("rerun")),
        ("  \n/export-check   \nmore text", Request("rerun")),
        ("/export-check full", Request("full")),
        ("/export-check probe", Request("probe")),
        ("/export-check failed", Request("failed")),
        ("/export-check apply", Request("apply")),
        ("/export-check help", Request("help")),
        ("/export-check BertModel", Request("models", models=("BertModel",))),
        ("/export-check llama BertModel llama", Request("models", models=("llama", "BertModel"))),
        (
            "/export-check vit --backend onnx --backend=executorch --static",
            Request("models", models=("vit",), backends=("onnx", "executorch"), shapes=("static",)),
        ),
        (
            "/export-check LlamaForCausalLM --backend dynamo,openvino --dynamic --generate",
            Request(
                "models",
                models=("LlamaForCausalLM",),
                backends=("dynamo", "openvino"),
                shapes=("dynamic",),
                generate=True,
            ),
        ),
    ],
)
def test_valid_commands(body, expected):
    assert parse(body) == expected


@pytest.mark.parametrize("body", ["", "please run /export-check", "/export-checking", "> /export-check", "thanks!"])
def test_other_comments_are_not_commands(body):
    assert parse(body) is None


@pytest.mark.parametrize(
    "body,problem",
    [
        ("/export-check fast", "`fast` is not a model class"),
        ("/export-check BertModl", "did you mean `BertModel`"),
        ("/export-check bert --backend tensorrt", "unknown backend `tensorrt`"),
        ("/export-check bert --backend", "`--backend` needs a value"),
        ("/export-check bert --backend=,,,", "`--backend` needs a value"),
        ("/export-check bert --backend ,", "`--backend` needs a value"),
        ("/export-check --static", "at least one model"),
        ("/export-check bert --quick", "`--quick` is not understood"),
        ("/export-check full bert", "`full` is not understood here"),
        ("/export-check failed bert", "`failed` is not understood here"),
        ("/export-check failed --backend onnx", "`failed` is not understood here"),
    ],
)
def test_unknown_words_get_the_help_text(body, problem):
    result = parse(body)
    assert isinstance(result, Invalid)
    assert problem in result.message and help_text() in result.message


def test_the_installed_transformers_names_are_accepted():
    index = installed_index()
    if not index.classes:
        pytest.skip("transformers is not installed")
    result = parse_command(
        "/export-check BertModel gpt2", model_classes=index.classes, model_types=frozenset(index.classes_by_type)
    )
    assert result == Request("models", models=("BertModel", "gpt2"))


def test_requests_round_trip_through_json():
    request = Request("models", models=("bert",), backends=("onnx",), pr=3, head_sha="a" * 40, comment_id=9)
    assert Request.from_json(request.to_json()) == request
    failed = Request("failed", cells=("BertModel::test_onnx_export_static",), pr=3, head_sha="a" * 40)
    assert Request.from_json(failed.to_json()) == failed


def test_a_refusal_lists_a_few_problems_and_counts_the_rest():
    result = parse("/export-check " + " ".join(f"bad{i}" for i in range(3000)))
    assert isinstance(result, Invalid) and result.count == 3000 and len(result.problems) == MAX_SHOWN
    assert "… and 2995 more problems (3000 in all)" in result.message
    assert len(result.message) < 4000


def test_parsing_describes_only_the_problems_it_shows(monkeypatch):
    # Suggestions scan every known name: one per shown problem keeps parsing linear in the input.
    calls = []
    real = command.difflib.get_close_matches
    monkeypatch.setattr(command.difflib, "get_close_matches", lambda *a, **k: calls.append(a) or real(*a, **k))
    result = parse("/export-check " + " ".join(f"w{i}" for i in range(5000)))
    assert isinstance(result, Invalid) and result.count == 5000 and len(calls) == MAX_SHOWN


def test_a_long_word_is_shortened_in_the_reply():
    result = parse("/export-check " + "x" * 5000)
    assert isinstance(result, Invalid) and "x" * 40 not in result.message and "x" * 39 + "…" in result.message


@pytest.mark.parametrize("word", ["a`@team", "``@org/team``", "@everyone", "`<img src=x>`", "`" * 7, "x`\n@team"])
def test_an_echoed_word_stays_in_its_code_span_and_mentions_nobody(word):
    quoted = code(word)
    assert quoted.startswith("`") and quoted.endswith("`") and quoted.count("`") == 2
    assert "@" not in quoted.replace("@\u200b", "")


def test_a_fence_is_longer_than_any_backquote_run_inside():
    block = fenced("a\n````\nb", "diff")
    assert block.startswith("`````diff\n") and block.endswith("\n`````")


def test_a_fork_reply_always_fits_a_comment():
    assert "```diff\n+a\n```" in fork_apply_reply("someone/x", "+a\n")
    huge = fork_apply_reply("someone/x", "+line\n" * 20_000)
    assert len(huge) < 1000 and "20,000 lines" in huge and "export-report" in huge


def _table_rows(text: str) -> list[list[str]]:
    """The table's rows as a real Markdown parser reads them (GitHub's tables: the GFM extension): each cell's text."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    rows, row = [], None
    for token in tokens:
        if token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append("".join(child.content for child in token.children or ()))
        elif token.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def test_the_help_table_has_two_cells_a_row_and_shows_the_backends_with_their_pipes():
    rows = _table_rows(help_text())
    assert rows[0] == ["command", "does"] and len(rows) == 8
    assert all(len(row) == 2 for row in rows), [len(row) for row in rows]
    [models] = [row[0] for row in rows if "--backend" in row[0]]
    assert f"--backend {'|'.join(BACKENDS)} …] [--static|--dynamic]" in models, models
