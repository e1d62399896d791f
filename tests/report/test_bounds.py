"""Rendering is linear in the report: attacker-sized inputs take time in proportion, and a table never grows from keys.

The bounds are generous for a loaded CI runner; the scaling check (twice the input, at most about
three times the time) is what catches a quadratic render.
"""

from __future__ import annotations

import time

import pytest

from bot.cells import cells_for
from bot.diff.errors import ReportError
from bot.diff.groups import Culprit, Group, Hint
from bot.diff.model import CellLine, Report
from bot.diff.proposal import Proposal, ProposedEdit
from bot.report import render_comment, render_summary
from tests.report.hostile import hostile_document

LIMIT = 5.0  # seconds for one render of the larger input, on a slow shared runner


def counts_report(keys: int) -> Report:
    """A `counts` table with `keys` keys of its own invention (built directly: the reader refuses them)."""
    counts = {f"backend{i}/shape{i}": {"failed": 1} for i in range(keys)}
    return Report(verdict="failure", headline="h", baseline=True, counts=counts)


def huge_report(n: int) -> Report:
    """Everything a report can hold many of, `n` times: cells, groups of cells, problems, versions, patch lines."""
    ids = []
    i = 0
    while len(ids) < n:
        ids += [c.id for c in cells_for(f"Synth{i}ForCausalLM", generative=True)]
        i += 1
    ids = ids[:n]
    message = "E: `@x` <b>|</b> [a](b) " * 10
    lines = tuple(CellLine(c, "failed", "export", message=message, covered_by="onnx") for c in ids)
    culprit = Culprit("src/transformers/x.py", 1, "@x <b>", True, "https://github.com/o/r/blob/a/x.py#L1")
    groups = tuple(
        Group(
            "export",
            f"Sig{g} @x",
            tuple(ids[g::50]),
            message,
            culprit,
            "export-bot run",
            Hint("h", "@x", "javascript:"),
        )
        for g in range(50)
    )
    return Report(
        verdict="failure",
        headline="@x <!-- -->" * (n // 10),
        baseline=True,
        categories={"newly_broken": lines, "still_failing": lines, "newly_passing": lines, "not_run": lines},
        cells=lines,
        groups=groups,
        needs_rerun=ids,
        versions={f"v{k}": "@x" for k in range(n // 10)},
        run_url="https://github.com/o/r/actions/runs/1",
        repository_url="https://github.com/o/r",
        proposal=Proposal(
            patch="\n".join("+x `@y`" for _ in range(n)),
            entries=(ProposedEdit("add", "export_skips.toml", "onnx", "BertModel", reason="@x <b>"),) * n,
        ),
    )


def _seconds(render, report) -> float:
    best = float("inf")
    for _ in range(2):  # the better of two: a neighbour's burst of work is not the render's
        start = time.perf_counter()
        render(report)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("render", [render_comment, render_summary], ids=["comment", "summary"])
def test_a_counts_table_with_thousands_of_keys_renders_at_once(render):
    small, large = _seconds(render, counts_report(2_500)), _seconds(render, counts_report(5_000))
    assert large < LIMIT, f"{large:.2f} s for 5,000 counts keys"
    assert large <= 3 * small + 0.05, f"2,500 keys: {small:.3f} s, 5,000 keys: {large:.3f} s"
    text = render(counts_report(5_000))
    assert "backend4999" not in text  # the table's rows and columns are the matrix's


@pytest.mark.parametrize("render", [render_comment, render_summary], ids=["comment", "summary"])
def test_every_render_is_linear_in_the_report(render):
    small, large = _seconds(render, huge_report(4_000)), _seconds(render, huge_report(8_000))
    assert large < LIMIT, f"{large:.2f} s for a report of 8,000 of everything"
    assert large <= 3 * small + 0.05, f"4,000: {small:.3f} s, 8,000: {large:.3f} s"


def test_the_comment_always_fits_its_limit():
    report = huge_report(8_000)
    for limit in (65_536, 10_000, 1_000, 100):
        assert len(render_comment(report, max_chars=limit)) <= limit


def test_counts_keys_outside_the_matrix_are_refused_in_one_line():
    document = hostile_document("x")
    document["counts"] = {f"backend{i}/shape": {"failed": 1} for i in range(5_000)}
    with pytest.raises(ReportError, match=r"field `counts.backend0/shape` must be a key of the form backend/shape"):
        Report.from_json(document)
    document["counts"] = {"onnx/static": {"exploded": 1}}
    with pytest.raises(ReportError, match=r"field `counts.onnx/static.exploded` must be keyed by a status"):
        Report.from_json(document)
    document["counts"] = {"onnx/static": {"failed": -1}}
    with pytest.raises(ReportError, match=r"field `counts.onnx/static.failed` must be zero or more"):
        Report.from_json(document)
