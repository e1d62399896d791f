"""Weak passes and setup problems travel from JUnit through the reader and the diff into report.json and the markdown."""

from __future__ import annotations

from bot.diff import diff
from bot.diff.model import load_report, write_report
from bot.report import render_comment, render_summary
from bot.results import read_results
from tests.report.sample import skiplists
from tests.results.factory import Case, junit

SETUP = {"setup_module": "tests/models/bert/test_modeling_bert.py", "setup_origin": "tests/generation/test_utils.py"}


def test_compared_and_setup_problems_reach_the_report(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(
        junit(
            [
                Case("BertModel::test_torch_export_static", extra={"compared": "values"}),
                Case("BertModel::test_executorch_export_static_xnnpack", extra={"compared": "count"}),
                Case("LlamaForCausalLM::test_onnx_export_generate_static", extra={"compared": "names"}),
                Case("LlamaForCausalLM::test_executorch_export_generate_static_xnnpack", extra={"compared": "none"}),
                Case("LlamaForCausalLM::test_torch_export_static"),  # an older JUnit: nothing said
                Case(
                    "BertModel::test_onnx_export_static",
                    "error",
                    kind="build",
                    stage="build",
                    message="ImportError: no X (tests/generation/test_utils.py raised it while importing …)",
                    extra=SETUP,
                ),
            ]
        ),
        encoding="utf-8",
    )
    report = diff(None, read_results([path]), skiplists(tmp_path / "skiplists"))
    compared = {line.cell: line.compared for line in report.cells}
    assert compared == {
        "BertModel::test_torch_export_static": None,  # a full comparison is the default
        "BertModel::test_executorch_export_static_xnnpack": "count",
        "LlamaForCausalLM::test_onnx_export_generate_static": "names",
        "LlamaForCausalLM::test_executorch_export_generate_static_xnnpack": "none",
        "LlamaForCausalLM::test_torch_export_static": None,
        "BertModel::test_onnx_export_static": None,
    }
    assert report.setup_problems == (
        {
            "origin": "tests/generation/test_utils.py",
            "message": "ImportError: no X",
            "modules": ["tests/models/bert/test_modeling_bert.py"],
            "cells": 1,
        },
    )
    write_report(report, tmp_path / "report.json")
    assert load_report(tmp_path / "report.json") == report
    comment = render_comment(report)
    assert "☑️ 3 passes on a weak check, compared output names only (1), the output count only (1), nothing (1)." in (
        comment
    )
    assert "⚠️ 1 test module failed to import: tests/generation/test_utils.py raised ImportError: no X" in comment
    summary = render_summary(report)
    assert "| BertModel | ✅ | ⚠️ | ☑️ |" in summary.replace("  ", " ")
