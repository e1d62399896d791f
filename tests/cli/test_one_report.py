"""`check`, `report` and `diff` on the same inputs write the same report.json: one report job behind all three.

Nothing in report.json names the command that wrote it, so "differ only in fields that name the
command" is equality. `created` is the one field that depends on the clock: SOURCE_DATE_EPOCH fixes it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.results.factory import Case, junit

STATIC = "BertModel::test_torch_export_static"
EPOCH = "1764633600"  # 2025-12-02T00:00:00+00:00


def bot(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "GITHUB_REPOSITORY": "owner/repo"}
    command = [sys.executable, "-m", "bot", *map(str, args)]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)


def report_and_diff(tmp_path, base, head) -> tuple[dict, dict]:
    """report.json of `export-bot report` and of `export-bot diff` on the same base and head."""
    result = bot("report", "--base", base, "--head", head, "--out", tmp_path / "report", "-n", "0")
    assert result.returncode == 0, result.stderr[-3000:]
    result = bot("diff", "--base", base, "--head", head, "--json", tmp_path / "diff" / "report.json")
    assert result.returncode in (0, 1), result.stderr[-3000:]
    return (
        json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8")),
        json.loads((tmp_path / "diff" / "report.json").read_text(encoding="utf-8")),
    )


def test_report_and_diff_agree_field_for_field(tmp_path):
    base, head = tmp_path / "base.xml", tmp_path / "head.xml"
    # A newly passing cell, a new failing one (proposed as a skip), a still failing one, one not run.
    base.write_text(
        junit(
            [
                Case(STATIC, "failed", "RuntimeError: old", stage="export"),
                Case("BertModel::test_onnx_export_static", "failed", "RuntimeError: still", stage="export"),
                Case("ViTModel::test_onnx_export_static"),
            ]
        )
    )
    head.write_text(
        junit(
            [
                Case(STATIC),
                Case("BertModel::test_onnx_export_static", "failed", "RuntimeError: still", stage="export"),
                Case("GPT2Model::test_onnx_export_dynamic", "failed", "RuntimeError: new", stage="export"),
            ]
        )
    )
    from_report, from_diff = report_and_diff(tmp_path, base, head)
    assert from_report == from_diff
    assert from_report["created"] == "2025-12-02T00:00:00+00:00"
    assert from_report["proposal"]["entries"] and from_report["categories"]["newly_passing"]


@pytest.mark.export
def test_check_report_and_diff_write_the_same_report(tmp_path):
    """The cheapest real check (one dynamo cell, in-process), then `report` and `diff` on its JUnit."""
    base = tmp_path / "base.xml"
    base.write_text(junit([Case(STATIC, "failed", "RuntimeError: old", stage="export")]))
    out = tmp_path / "check"
    result = bot(
        "check", "--models", "BertModel", "--backends", "dynamo", "--shapes", "static", "--no-generate",
        "-n", "0", "--base-junit", base, "--out", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    from_check = json.loads((out / "report.json").read_text(encoding="utf-8"))
    from_report, from_diff = report_and_diff(tmp_path, base, out / "junit.xml")
    # check holds its head against the cells it planned (docs/outcomes.md, Missing); report and diff had no selection.
    assert (from_check.pop("selected"), from_report.pop("selected"), from_diff.pop("selected")) == (1, None, None)
    assert from_check == from_report == from_diff
    assert from_check["created"] and from_check["proposal"] is not None
    assert [line["cell"] for line in from_check["categories"]["newly_passing"]] == [STATIC]
