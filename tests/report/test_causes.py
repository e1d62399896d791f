"""Causes in the comment and the job summary: a recorded real run's golden, the extent line, and the size limit.

data/guard_head.xml is the JUnit of a real run (tests/e2e/test_cause_comment.py records it):
a PR adds `if int(input_ids.max()) < 0:` to a tiny model, exported on torch.export and ONNX.
"""

from __future__ import annotations

import re
from pathlib import Path

from bot.diff import diff
from bot.diff.groups import Culprit, Group
from bot.diff.hints import Hint
from bot.diff.model import Report
from bot.report import render_comment, render_summary
from bot.report.groups import extent
from bot.results import read_results
from bot.select.selection_file import changed_lines_of, read_selection_document
from tests.conftest import SKIPLISTS
from tests.report.test_render import check_golden

DATA = Path(__file__).parent / "data"
JUNIT = DATA / "guard_head.xml"
SELECTION = DATA / "guard_selection.json"
GOLDEN = "comment_data_dependent_guard.md"
REPOSITORY = "huggingface/transformers"


def masked(comment: str, head_sha: str) -> str:
    """What differs between two runs of one PR: the commit SHAs, the versions, where transformers is, the time taken."""
    comment = comment.replace(head_sha, "<head-sha>").replace(head_sha[:12], "<head>")
    comment = re.sub(r"^Tested transformers .*$", "Tested transformers <provenance>.", comment, flags=re.M)
    # The times are the recorded run's own; the cost line's shape is what the golden pins.
    comment = re.sub(
        r"^Cost: .*$", lambda m: re.sub(r"\d+(\.\d+)? (s|min|h)\b", "<time>", m.group()), comment, flags=re.M
    )
    return re.sub(r"^Versions: .*$", "Versions: <versions>.", comment, flags=re.M)


def recorded_report() -> Report:
    from bot.propose.proposal import propose
    from bot.skiplist.model import read_skiplists

    head = read_results([JUNIT])
    _, document = read_selection_document(SELECTION)
    loaded = read_skiplists(SKIPLISTS)
    report = diff(
        None,
        head,
        loaded.skiplists,
        changed_lines=changed_lines_of(document, SELECTION),
        repository_url=f"https://github.com/{REPOSITORY}",
    )
    report = report.with_selection(document["summary"])  # as `export-bot diff --selection` does
    return report.with_proposal(propose(report, head.results, loaded))


def test_the_recorded_run_renders_the_golden_comment():
    report = recorded_report()
    [group] = report.groups
    assert len(group.cells) == 4 and group.culprit.changed and group.hint.id == "data-dependent-guard"
    check_golden(GOLDEN, masked(render_comment(report), report.head_sha))


def test_the_summary_and_report_json_carry_the_same_groups():
    report = recorded_report()
    summary = render_summary(report)
    assert "## Failing cells by cause (4 cells, 1 cause)" in summary
    assert f"[`{report.groups[0].culprit.where}`]({report.groups[0].culprit.url}) **changed in this PR**" in summary
    assert Report.from_json(report.to_json()).groups == report.groups


def test_extent_says_classes_and_cell_kinds_compactly():
    cells = [
        f"{cls}::test_{fn}_export_{shape}"
        for cls in ("AModel", "BModel", "CModel")
        for fn in ("torch", "onnx")
        for shape in ("static", "dynamic")
    ]
    # One name per backend: the extent spells it as the comment's table and the skip scopes do.
    assert extent(cells) == "3 classes × dynamo static, dynamic; onnx static, dynamic"
    cells += ["DModel::test_torch_export_static", "EModel::test_executorch_export_generate_dynamic_xnnpack"]
    assert extent(cells) == (
        "3 classes × dynamo static, dynamic; onnx static, dynamic · 1 class × dynamo static"
        " · 1 class × executorch (xnnpack) generate dynamic"
    )


def test_a_comment_with_thousands_of_causes_fits_and_says_what_it_left_out():
    groups = tuple(
        Group(
            "export",
            f"RuntimeError: cause number {'x' * (i % 50)} {i}",
            tuple(f"Synth{i}Model::test_onnx_export_{s}" for s in ("static", "dynamic")),
            excerpt="RuntimeError: " + "y" * 400,
            culprit=Culprit(f"src/transformers/models/s{i}/modeling_s{i}.py", i, "x = y" * 40, i % 2 == 0),
            repro=f"export-bot run --cells Synth{i}Model::test_onnx_export_static",
            hint=Hint("h", "A hint " * 20, "https://example.com"),
        )
        for i in range(3000)
    )
    report = Report(verdict="failure", headline="6,000 cells failing", baseline=False, groups=groups)
    text = render_comment(report)
    assert len(text) <= 65536
    assert "more causes" in text and "Shortened to fit the comment limit" in text


def test_a_scattered_extent_names_three_clauses_and_counts_the_rest():
    cells = [f"C{i}Model::test_torch_export_static" for i in range(4)]
    cells += [f"D{i}Model::test_onnx_export_dynamic" for i in range(3)]
    cells += ["EModel::test_openvino_export_static", "FModel::test_openvino_export_dynamic"]
    cells += ["GModel::test_torch_export_dynamic", "HModel::test_onnx_export_static"]
    assert extent(cells) == (
        "4 classes × dynamo static · 3 classes × onnx dynamic · 1 class × dynamo dynamic · 3 more classes in other kinds of cells"
    )
