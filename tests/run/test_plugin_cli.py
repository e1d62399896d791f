"""`export-bot run` end to end: the real command, one xdist worker, a real (tiny) export, JUnit back."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.run.plugin_helpers import read_junit


@pytest.mark.export
def test_run_writes_junit_progress_and_summary(tmp_path):
    junit = tmp_path / "out.xml"
    command = [
        sys.executable,
        "-m",
        "bot",
        "run",
        "--models",
        "BertModel,GhostModel",
        "--backends",
        "dynamo",
        "--shapes",
        "static",
        "-n",
        "1",
        "--junit",
        str(junit),
        "--cell-timeout",
        "600",
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]  # a class the zoo cannot build is data, not a failed run
    cases = read_junit(junit).cases
    assert set(cases) == {"BertModel::test_torch_export_static", "GhostModel::test_torch_export_static"}
    assert cases["BertModel::test_torch_export_static"].outcome == "passed"
    assert cases["GhostModel::test_torch_export_static"].kind == "not-buildable"
    assert "[2/2] · 0 failing" in result.stderr and "not-buildable: GhostModel" in result.stderr
    assert "dynamo" in result.stderr.split("backend  passed")[-1]  # the closing summary table
    assert (tmp_path / "out.pytest.log").is_file()
