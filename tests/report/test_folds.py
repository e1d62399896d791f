"""The comment leads with what to do: a cause on a line the PR changed first, its proposed skips folded under it."""

from __future__ import annotations

from bot.diff.groups import Culprit, Group
from bot.diff.hints import known_hint
from bot.diff.model import CellLine, Report
from bot.diff.proposal import ADD, REMOVE, Proposal, ProposedEdit
from bot.report import render_comment
from bot.report.folds import fold_proposal, fold_summary, unseen_backends
from tests.report.hostile import assert_inert

BERTS = ("BertModel", "BertForMaskedLM", "BertForNextSentencePrediction", "BertForPreTraining", "BertLMHeadModel")
BERTS += ("BertForMultipleChoice", "BertForQuestionAnswering", "BertForSequenceClassification")
BERTS += ("BertForTokenClassification", "BertGenerationEncoder", "BertGenerationDecoder", "BertForCausalLM")
SHAPES = ("static", "dynamic")
BERT_CELLS = tuple(f"{cls}::test_torch_export_{shape}" for cls in BERTS for shape in SHAPES)
GPT_CELLS = ("GPT2Model::test_onnx_export_static",)
MODELING = "src/transformers/models/bert/modeling_bert.py"
PATCH = '--- a/skiplists/export_skips.toml\n+++ b/skiplists/export_skips.toml\n@@ -1 +1,2 @@\n+BertModel = "x"\n'


def group(cells, *, changed: bool, signature: str = "GuardOnDataDependentSymNode: u… > #") -> Group:
    culprit = Culprit(MODELING, 123, "if input_ids.max() > 0:", changed)
    return Group(
        "export",
        signature,
        tuple(cells),
        "GuardOnDataDependentSymNode: u0 > 1",
        culprit,
        "export-bot run --cells x",
        known_hint("data-dependent-guard"),
    )


def add(model_class: str, cells, scope: str = "all") -> ProposedEdit:
    return ProposedEdit(ADD, "export_skips.toml", scope, model_class, reason="breaks", evidence=tuple(cells))


def report(groups, entries, *, backends=("dynamo",), uncoverable=()) -> Report:
    cells = [cell for g in groups for cell in g.cells]
    lines = tuple(CellLine(cell, "failed", "export", base_status="passed") for cell in cells)
    return Report(
        verdict="failure",
        headline=f"{len(cells)} cells newly broken and not covered by the skiplists",
        baseline=True,
        categories={"newly_broken": lines},
        counts={f"{backend}/{shape}": {"failed": 1} for backend in backends for shape in SHAPES},
        cells=lines,
        groups=tuple(groups),
        proposal=Proposal(entries=tuple(entries), patch=PATCH, uncoverable=tuple(uncoverable)),
    )


def bert_report(*, changed: bool = True) -> Report:
    entries = [add(cls, [c for c in BERT_CELLS if c.startswith(cls + "::")]) for cls in BERTS]
    return report([group(BERT_CELLS, changed=changed)], entries)


def test_the_bert_break_shows_its_line_and_hint_first_and_folds_the_skip_of_12_classes():
    comment = render_comment(bert_report())
    culprit, hint = comment.index(f"`{MODELING}:123` **changed in this PR**"), comment.index("torch._check")
    fold = comment.index("<details><summary>if this break is intended: skip 12 classes in all</summary>")
    assert culprit < hint < fold < comment.index("**add** `BertModel` to `all`") < comment.index("```diff")
    assert "### Proposed skiplist change" not in comment
    assert comment.index("```diff") < comment.index("</details>", fold)
    assert "Computed from dynamo results; onnx, openvino and executorch were not run." in comment


def test_a_cause_the_pr_did_not_write_keeps_its_proposal_in_the_open():
    comment = render_comment(bert_report(changed=False))
    assert "if this break is intended" not in comment
    assert (
        comment.index("### Proposed skiplist change") < comment.index("**add** `BertModel`") < comment.index("```diff")
    )


def test_the_pr_s_own_cause_comes_first_and_only_its_skips_fold():
    other = group(GPT_CELLS, changed=False, signature="UnsupportedOperator: aten::foo")
    mine = group(BERT_CELLS[:2], changed=True)
    entries = [add("BertModel", BERT_CELLS[:2]), add("GPT2Model", GPT_CELLS, "onnx")]
    comment = render_comment(report([other, mine], entries, backends=("dynamo", "onnx")))
    assert comment.index("**1. `GuardOnDataDependentSymNode") < comment.index("**2. `UnsupportedOperator")
    fold = comment.index("<details><summary>if this break is intended: skip 1 class in all</summary>")
    section = comment.index("### Proposed skiplist change")
    assert fold < comment.index("**add** `BertModel`") < section < comment.index("**add** `GPT2Model`")
    assert "- 1 entry for the causes above, folded under them" in comment
    assert comment.index("```diff") > section and "were not run" in comment


def test_skips_spanning_the_pr_s_cause_and_another_stay_in_the_open():
    other = group(GPT_CELLS, changed=False, signature="UnsupportedOperator: aten::foo")
    mine = group(BERT_CELLS[:2], changed=True)
    folds = fold_proposal(report([mine, other], [add("Mixed", BERT_CELLS[:1] + GPT_CELLS)]))
    assert folds.folded == frozenset() and folds.patch_under is None


def test_two_of_the_pr_s_own_causes_each_fold_their_skips_and_the_patch_folds_below():
    first = group(BERT_CELLS[:2], changed=True)
    second = group(BERT_CELLS[2:4], changed=True, signature="Unsupported: x")
    entries = [add(BERTS[0], BERT_CELLS[:2]), add(BERTS[1], BERT_CELLS[2:4], "dynamo")]
    built = report([first, second], entries, backends=("dynamo", "onnx", "openvino", "executorch"))
    folds = fold_proposal(built)
    assert folds.entries == {0: (0,), 1: (1,)} and folds.patch_under is None
    comment = render_comment(built)
    assert comment.count("<details><summary>if this break is intended: skip 1 class in ") == 2
    patch = comment.index("<details><summary>if these breaks are intended: skip 2 classes in all, dynamo: the patch")
    assert comment.index("### Proposed skiplist change") < patch < comment.index("```diff")
    assert "were not run" not in comment and "was not run" not in comment


def test_removals_and_uncoverable_cells_are_never_folded():
    edits = [
        add("BertModel", BERT_CELLS[:2]),
        ProposedEdit(REMOVE, "export_skips.toml", "all", "OldModel", evidence=("OldModel::test_torch_export_static",)),
    ]
    folds = fold_proposal(report([group(BERT_CELLS[:2], changed=True)], edits))
    assert folds.folded == {0} and folds.patch_under is None
    comment = render_comment(report([group(BERT_CELLS[:2], changed=True)], edits))
    assert comment.index("if this break is intended") < comment.index("### Proposed skiplist change")
    assert comment.index("**remove** `OldModel`") > comment.index("### Proposed skiplist change")


def test_the_summary_and_the_backends_note_read_as_sentences():
    assert (
        fold_summary((add("A", ()), add("B", ()), add("B", (), "onnx")))
        == "if this break is intended: skip 2 classes in all, onnx"
    )
    scopes = tuple(add("A", (), scope) for scope in ("all", "onnx", "dynamo", "openvino"))
    assert fold_summary(scopes, several=True) == "if these breaks are intended: skip 1 class in all, onnx, dynamo, …"
    two = Report("success", "x", True, counts={"dynamo/static": {"passed": 1}, "onnx/dynamic": {"passed": 1}})
    assert unseen_backends(two) == "Computed from dynamo and onnx results; openvino and executorch were not run."
    three = Report("success", "x", True, counts={f"{b}/static": {"passed": 1} for b in ("dynamo", "onnx", "openvino")})
    assert unseen_backends(three) == "Computed from dynamo, onnx and openvino results; executorch was not run."
    assert unseen_backends(Report("success", "x", True)) is None


def test_a_folded_proposal_from_a_hostile_report_stays_inert():
    payload = "<img src=x onerror=alert(1)> @victim [x](https://evil.example) </summary></details>"
    edits = [ProposedEdit(ADD, "export_skips.toml", payload, "BertModel", reason=payload, evidence=BERT_CELLS[:2])]
    hostile = report([group(BERT_CELLS[:2], changed=True, signature=payload)], edits)
    assert_inert(render_comment(hostile), marker=True)
    assert "if this break is intended: skip 1 class in &lt;img" in render_comment(hostile)
