"""The `/export-check` grammar (docs/github.md), parsed without I/O."""

from __future__ import annotations

import pytest

from bot.model_index import installed_index
from bot.publish.command import HELP_TEXT, Invalid, Request, parse_command

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
        ("/export-check --static", "at least one model"),
        ("/export-check bert --quick", "`--quick` is not understood"),
        ("/export-check full bert", "`full` is not understood here"),
    ],
)
def test_unknown_words_get_the_help_text(body, problem):
    result = parse(body)
    assert isinstance(result, Invalid)
    assert problem in result.message and HELP_TEXT in result.message


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
