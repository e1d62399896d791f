"""Parity on a small slice: upstream's pytest and export-bot on the same checkout and cells agree on every cell.

bert and llama, dynamo, forward and generate, over the fixture checkout with its export test
module (tests/fixtures/transformers_checkout_export) and one model whose export disagrees with
eager, so a failing component is compared too. The module's tables and the TOML skiplists hold
the same entries, as `skiplist import` would make them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.run.plugin_helpers import write_skiplists
from tests.run.test_checkout_judge import add_drifting_model, export_checkout

SKIP = "Dynamic multiple choice: the fixture's dynamic dims do not reach the choices axis."


def _parity():
    spec = importlib.util.spec_from_file_location("parity", ROOT / "benchmarks" / "parity.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["parity"] = module  # its dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def _skip_in_the_module(root: Path) -> None:
    path = root / "tests" / "exporters" / "test_export.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"dynamic": {},', f'"dynamic": {{"BertForMultipleChoice": "{SKIP}"}},', 1))


@pytest.mark.export
def test_upstream_pytest_and_export_bot_agree_on_every_cell(tmp_path):
    parity = _parity()
    checkout = export_checkout(tmp_path / "checkout")
    (checkout / "conftest.py").unlink()  # the fixture's guard against this suite collecting it; upstream's pytest must
    add_drifting_model(checkout)
    _skip_in_the_module(checkout)
    skiplists = write_skiplists(tmp_path / "skiplists", f'[dynamic]\nBertForMultipleChoice = "{SKIP}"\n')
    cells = parity.select_cells(
        checkout, "BertModel,BertForMultipleChoice,LlamaForCausalLM,DriftModel", "dynamo", "static,dynamic"
    )
    work = tmp_path / "work"
    work.mkdir()
    upstream = parity.run_upstream(checkout, cells, 0, work)
    bot = parity.run_bot(checkout, cells, 0, skiplists, work)
    print(parity.table(upstream, bot, 0))  # the figures, under `pytest -s`
    assert parity.differences(upstream.verdicts, bot.verdicts) == [], parity.table(upstream, bot, 0)
    outcomes = {cell: verdict.outcome for cell, verdict in upstream.verdicts.items()}
    # The slice covers each kind of verdict, so agreement is not agreement on nothing.
    assert outcomes["BertModel::test_torch_export_static"] == "passed"
    assert outcomes["LlamaForCausalLM::test_torch_export_generate_dynamic"] == "passed"
    assert outcomes["BertForMultipleChoice::test_torch_export_dynamic"] == "skipped"
    # Cells come from the checkout's methods: its module has no static-cache generate test.
    assert "LlamaForCausalLM::test_torch_export_generate_static_static_cache" not in outcomes
    drift = upstream.verdicts["DriftModel::test_torch_export_static"]
    assert (drift.outcome, drift.component) == ("failed", "DriftModel/model")
    assert drift.message.startswith("AssertionError: Tensor-likes are not close!")
