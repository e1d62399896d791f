"""The PR comment and the job summary: golden files, the size limit, and what a neutral verdict shows.

Golden files live in tests/report/golden/. After an intended format change, regenerate them with
`UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/report` and review the diff before committing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.cells import cells_for
from bot.diff.model import CellLine, Report
from bot.diff.proposal import Proposal, ProposedEdit
from bot.report import COMMENT_MARKER, render_comment, render_summary
from tests.report.sample import PATCH, failure_report, missing_report, neutral_report, no_baseline_report

GOLDEN = Path(__file__).parent / "golden"
REPORTS = {
    "failure": failure_report,
    "neutral": neutral_report,
    "no_baseline": no_baseline_report,
    "missing": missing_report,  # selected cells with no result, and foreign testcases (docs/outcomes.md)
}


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} is missing; run with UPDATE_GOLDEN=1 to write it"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; if on purpose, rerun with UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", REPORTS)
def test_comment_matches_golden(tmp_path, name):
    check_golden(f"comment_{name}.md", render_comment(REPORTS[name](tmp_path)))


@pytest.mark.parametrize("name", REPORTS)
def test_summary_matches_golden(tmp_path, name):
    check_golden(f"summary_{name}.md", render_summary(REPORTS[name](tmp_path)))


def test_comment_opens_with_the_marker_and_the_verdict(tmp_path):
    text = render_comment(failure_report(tmp_path))
    first, second = text.splitlines()[:2]
    assert first == COMMENT_MARKER == "<!-- export-bot:conformance -->"
    assert "failure" in second
    assert "```diff\n" + PATCH.rstrip("\n") + "\n```" in text
    assert "<details><summary>Pre-existing failures" in text
    # Error text in tables never pings anyone (inside the ```diff block GitHub does not link mentions).
    assert "> `BertModel::test_onnx_export_dynamic`: RuntimeError: boom \\| pipe @\u200bsomeone &lt;b&gt;\n" in text


def test_neutral_comment_names_every_problem(tmp_path):
    text = render_comment(neutral_report(tmp_path))
    assert "**neutral**" in text and "Results incomplete" in text
    assert "junit-2.xml:118: truncated or malformed XML" in text and "shard 3/3 is missing" in text


def test_no_baseline_is_said_and_not_shown_as_no_changes(tmp_path):
    text = render_comment(no_baseline_report(tmp_path))
    assert "No baseline: judged against the head's skiplists alone." in text
    assert "Base none (no baseline) → head `444444444444`." in text and "No cell changed category" not in text


def test_the_comment_names_the_merge_it_tested_and_the_field_round_trips(tmp_path):
    from dataclasses import replace

    report = replace(no_baseline_report(tmp_path), base_sha="b" * 40, head_sha="4" * 40, tested_sha="d" * 40)
    assert "Tested the merge `dddddddddddd` = base@`bbbbbbbbbbbb` + head@`444444444444`." in render_comment(report)
    assert Report.from_json(report.to_json()).tested_sha == "d" * 40
    assert "Tested the merge" not in render_comment(replace(report, tested_sha=None))


def worst_case(count: int = 30_000) -> Report:
    """Every cell of a full sweep newly broken, each with a long message, plus a long patch."""
    cells, i = [], 0
    while len(cells) < count:
        cells += [c.id for c in cells_for(f"Synthetic{i}ForCausalLM", generative=True)]
        i += 1
    message = "torch._dynamo.exc.UserError: Could not guard on data-dependent expression " + "Eq(u0, 1) " * 30
    lines = tuple(CellLine(c, "failed", "export", message=message[:300], base_status="passed") for c in cells[:count])
    patch = "\n".join(f'+Synthetic{i}ForCausalLM = "{message}"' for i in range(3000))
    counts = {"onnx/static": {"failed": count // 2}, "onnx/dynamic": {"failed": count - count // 2}}
    return Report(
        verdict="failure",
        headline=f"{count:,} cells newly broken and not covered by the skiplists",
        baseline=True,
        categories={"newly_broken": lines, "still_failing": lines, "not_run": lines},
        counts=counts,
        needs_rerun=tuple(c.cell for c in lines),
        cells=lines,
        base_sha="a" * 40,
        head_sha="b" * 40,
        run_url="https://github.com/o/r/actions/runs/1",
        repository_url="https://github.com/o/r",
        proposal=Proposal(patch=patch, entries=(ProposedEdit("remove", "export_skips.toml", "onnx", "M"),) * 3000),
    )


def test_worst_case_comment_fits_and_still_states_verdict_and_counts():
    text = render_comment(worst_case())
    assert len(text) < 65_536
    assert text.startswith(COMMENT_MARKER + "\n## ❌ Export conformance: **failure**")
    assert "30,000 cells newly broken" in text and "newly broken **30,000**" in text
    assert "| onnx | ❌ 15,000 | ❌ 15,000 |" in text
    assert (
        "Shortened to fit the comment limit: left out" in text
        and "[job summary](https://github.com/o/r/actions/runs/1)" in text
    )


@pytest.mark.parametrize("limit", [60_000, 20_000, 5_000, 2_000, 500])
def test_comment_never_exceeds_max_chars(limit):
    text = render_comment(worst_case(3_000), max_chars=limit)
    assert len(text) <= limit and text.startswith(COMMENT_MARKER)


def test_details_shrink_before_the_main_lists(tmp_path):
    report = worst_case(300)
    full = render_comment(report, max_chars=10**7)
    assert "Shortened" not in full
    squeezed = render_comment(report, max_chars=len(full) - 1)
    # The first budget that fits keeps every newly broken cell and cuts the folded lists.
    assert all(f"`{line.cell}`" in squeezed for line in report.category("newly_broken"))
    assert "left out 270 pre-existing failures, 270 cells not run" in squeezed


def test_summary_has_the_grid_of_model_classes_and_cells(tmp_path):
    text = render_summary(failure_report(tmp_path))
    assert "| model class | dynamo st |" in text
    assert "| GPT2LMHeadModel |" in text and "💥" in text and "🔓" in text and "⚠️" in text


def test_worst_case_summary_stays_under_the_step_summary_limit():
    text = render_summary(worst_case(), max_chars=900_000)
    assert len(text) <= 900_000 and "failure" in text.splitlines()[0]


def test_the_tested_transformers_line_says_where_from_and_when_shards_disagree(tmp_path):
    from dataclasses import replace

    from bot.report.markdown import tested_line
    from bot.results import Provenance

    report = failure_report(tmp_path / "s")
    line = "Tested transformers 5.23.0 from /work/transformers/src/transformers (checkout 2222222)."
    assert line in render_comment(report) and line in render_summary(report)
    split = Provenance("5.24.0.dev0", "/a/transformers / /b/transformers", "1234567aaa", ("transformers_location",))
    assert tested_line(replace(report, provenance=split)) == (
        "Tested transformers 5.24.0.dev0 from /a/transformers / /b/transformers (checkout 1234567). "
        "⚠️ The shards disagree on the location."
    )
    assert tested_line(replace(report, provenance=Provenance())) is None


def test_an_empty_proposal_gets_no_heading(tmp_path):
    report = no_baseline_report(tmp_path / "s").with_proposal(
        Proposal.from_json({"entries": [], "uncoverable": [], "patch": ""})
    )
    assert "Proposed skiplist change" not in render_comment(report)
