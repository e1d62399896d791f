"""Parity on upstream's real testers: upstream's own pytest and export-bot agree on every cell.

The checkout is assembled from the transformers 5.23.0 sdist (cached by scripts/test.sh) and
upstream's real test files, which live outside this repository, beside it in `../shared/upstream`
(or where `EXPORT_BOT_UPSTREAM` points); they are read at test time and never copied here. Their
testers do what hand-written fixtures miss: llama's `CausalLMModelTest.setUp()` infers the model
classes and refuses a test class that sets `all_model_classes` itself, so a runner that narrows
the class attribute fails every Llama cell while upstream passes them.

Outside CI (a clone without `../shared`) the test skips and says why; under `CI=true` a missing
input is a failure, so the parity slice never silently drops out of `.ci/run`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SDIST = ROOT / ".ci" / "cache" / "transformers-5.23.0.tar.gz"
MODELS = "BertModel,LlamaForCausalLM"


def _upstream() -> Path:
    given = os.environ.get("EXPORT_BOT_UPSTREAM")
    return Path(given) if given else ROOT.parent / "shared" / "upstream"


def _missing() -> str | None:
    upstream = _upstream()
    if not (upstream / "assemble.sh").is_file():
        return f"upstream's real testers are not at {upstream} (set EXPORT_BOT_UPSTREAM to their folder)"
    if not SDIST.is_file():
        return f"the transformers 5.23.0 sdist is not at {SDIST} (run: bash scripts/transformers-sdist.sh)"
    return None


@pytest.fixture(scope="module")
def real_checkout(tmp_path_factory) -> Path:
    missing = _missing()
    if missing and os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI runs the real-file parity slice, but {missing}")
    if missing:
        pytest.skip(missing)
    out = tmp_path_factory.mktemp("upstream") / "transformers"
    subprocess.run(["bash", str(_upstream() / "assemble.sh"), str(SDIST), str(out)], check=True, capture_output=True)
    return out


@pytest.mark.export
def test_upstream_pytest_and_export_bot_agree_on_upstreams_real_bert_and_llama(real_checkout, tmp_path):
    # In a process of its own: reading the checkout's tests imports its transformers, which must not
    # become the transformers of this test worker's later tests.
    out = tmp_path / "verdicts.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "parity.py"), str(real_checkout), "--models", MODELS]
    command += ["--backends", "dynamo", "--json", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    print(result.stdout)  # the table and the figures, under `pytest -s`
    # Outcome, failing component and its assertion, skip reason: any difference fails (exit 1).
    assert result.returncode == 0 and "differences: 0" in result.stdout, result.stdout + result.stderr[-3000:]
    verdicts = json.loads(out.read_text(encoding="utf-8"))
    outcomes = {cell: verdict["outcome"] for cell, verdict in verdicts["upstream"].items()}
    assert verdicts["bot"] == verdicts["upstream"]
    # Forward and generate, on a tester that spells its classes out and one that infers them in setUp().
    assert outcomes["BertModel::test_torch_export_static"] == "passed"
    assert outcomes["LlamaForCausalLM::test_torch_export_static"] == "passed"
    assert outcomes["LlamaForCausalLM::test_torch_export_generate_dynamic"] == "passed"
    assert len(outcomes) >= 8
    # Every test the bot listed is one it can read: what `@slow` leaves of an expansion is no test.
    assert "is not a name the bot can read" not in result.stderr, result.stderr[-3000:]
