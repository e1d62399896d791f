"""Proposals from reports: additions, removals and narrowings written through the editor; idempotent."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cells import Cell
from bot.diff import diff
from bot.diff.proposal import ADD, NARROW, REMOVE, Proposal
from bot.outcomes import Status
from bot.results.model import ResultSet
from bot.scopes import skip_scopes
from bot.skiplist.lint import lint_text
from bot.skiplist.model import load_skiplists
from tests.conftest import SKIPLISTS
from tests.propose.helpers import apply_at, outcomes, propose_at, report, result, row, skiplists_dir

SKIPS = """\
# ONNX, every variant.
[onnx]
FooModel = "Old reason."

# ONNX, dynamic-shape only.
["onnx.dynamic"]
BazModel = "The original explanation."
QuxModel = "Same as `BazModel`."
"""


def rediff(results, folder):
    """The diff engineer's pure diff, run on the same head results with the folder's skiplists."""
    return diff(None, ResultSet(results=results), load_skiplists(folder))


def test_new_failures_become_entries_with_drafted_reasons(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    results = outcomes(row("NewModel"), lambda c: c.backend == "openvino", message="RuntimeError: bad at 0x7fabcdef12")
    proposal = propose_at(report(results), folder)
    (edit,) = proposal.entries
    assert (edit.action, edit.scope, edit.model_class) == (ADD, "openvino", "NewModel")
    assert (
        edit.reason == "OpenVINO export fails at stage `export`: `RuntimeError: bad at 0x…`. TODO: find the root cause."
    )
    assert "+# OpenVINO, every variant.\n+[openvino]\n" in proposal.patch
    assert proposal.patch.startswith("--- a/skiplists/export_skips.toml\n+++ b/skiplists/export_skips.toml\n")


def test_classes_sharing_a_signature_reference_the_first(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    results = {}
    for name in ("BModel", "AModel", "CModel"):
        results.update(
            outcomes(row(name), lambda c: c.backend == "onnx" and c.dynamic, message=f"KeyError: {name} lacks x")
        )
    results.update(outcomes(row("DModel"), lambda c: c.backend == "onnx" and c.dynamic, message="ValueError: other"))
    proposal = propose_at(report(results), folder)
    reasons = {e.model_class: e.reason for e in proposal.entries}
    assert reasons["AModel"].startswith("ONNX export (dynamic shapes) fails")
    assert reasons["BModel"] == reasons["CModel"] == "Same `KeyError` at stage `export` as `AModel`."
    assert reasons["DModel"].startswith("ONNX export (dynamic shapes) fails at stage `export`: `ValueError: other`")
    # The referrers sit right after the entry they reference, inside the existing table.
    block = proposal.files["export_skips.toml"].split('["onnx.dynamic"]\n')[1].splitlines()
    assert [line.split(" =")[0] for line in block] == ["BazModel", "QuxModel", "AModel", "BModel", "CModel", "DModel"]


def test_uncoverable_cells_are_reported_not_skipped(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    lone = Cell("NewModel", "onnx", "dynamic")
    results = outcomes(row("NewModel", generative=True), lambda c: c == lone)
    proposal = propose_at(report(results), folder)
    assert proposal.entries == () and proposal.patch == ""
    (u,) = proposal.uncoverable
    assert u.cell == lone.id and u.finest_scope == "onnx.dynamic"
    assert "NewModel::test_onnx_export_generate_dynamic" in u.would_skip


def test_obsolete_removal_keeps_the_referenced_text(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    results = outcomes(row("BazModel"), lambda c: False, probe=True)
    results.update(outcomes(row("QuxModel"), lambda c: c.backend == "onnx" and c.dynamic, probe=True))
    proposal = propose_at(report(results), folder)
    assert [(e.action, e.model_class) for e in proposal.entries] == [(REMOVE, "BazModel")]
    text = proposal.files["export_skips.toml"]
    assert "BazModel" not in text.replace("`BazModel`", "")
    assert 'QuxModel = "The original explanation.' in text


def test_apply_then_propose_again_changes_nothing(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    before = (folder / "export_skips.toml").read_text()
    results = outcomes(row("NewModel", generative=True), lambda c: c.dynamic)  # → `dynamic`
    results.update(outcomes(row("FooModel"), lambda c: c.dynamic, probe=True))  # `onnx` → `onnx.dynamic`
    first = propose_at(rediff(results, folder), folder)
    assert {(e.action, e.scope, e.model_class) for e in first.entries} == {
        (ADD, "dynamic", "NewModel"),
        (NARROW, "onnx", "FooModel"),
    }
    written = apply_at(first, folder)
    assert written == [folder / "export_skips.toml"]
    after = (folder / "export_skips.toml").read_text()
    assert after == first.files["export_skips.toml"]
    # Untouched lines are byte-identical: every old line but the narrowed entry is still there, in order.
    kept = [line for line in before.splitlines(keepends=True) if not line.startswith("FooModel")]
    assert _subsequence(kept, after.splitlines(keepends=True))
    _lint_clean(folder, {"export_skips.toml": before})
    second_report = rediff(results, folder)
    assert second_report.verdict == "success"
    second = propose_at(second_report, folder)
    assert second.empty and second.patch == "" and apply_at(second, folder) == []
    # Applying the first proposal again is a no-op as well.
    assert apply_at(first, folder) == []


def test_shipped_skiplists_stay_clean_through_a_proposal(tmp_path):
    folder = tmp_path / "skiplists"
    shutil.copytree(SKIPLISTS, folder)
    # CHMv2ForDepthEstimation is in `onnx`; its probe passes everywhere. A new class fails on dynamo.
    results = outcomes(row("CHMv2ForDepthEstimation"), lambda c: False, probe=True)
    results.update(outcomes(row("BrandNewModel"), lambda c: c.backend == "dynamo"))
    before = {p.name: p.read_text() for p in folder.glob("*.toml")}
    proposal = propose_at(report(results), folder)
    assert {(e.action, e.scope, e.model_class) for e in proposal.entries} == {
        (REMOVE, "onnx", "CHMv2ForDepthEstimation"),
        (ADD, "dynamo", "BrandNewModel"),
    }
    apply_at(proposal, folder)
    reloaded = load_skiplists(folder)
    assert reloaded.explain(Cell("BrandNewModel", "dynamo", "static")).scope == "dynamo"
    assert not reloaded.explain(Cell("CHMv2ForDepthEstimation", "onnx", "static")).skipped
    _lint_clean(folder, before)


def test_history_reports_gate_removal(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    passing = report(outcomes(row("FooModel"), lambda c: False, probe=True))
    assert propose_at(passing, folder, history=[passing], min_passes=3).empty
    assert not propose_at(passing, folder, history=[passing, passing], min_passes=3).empty
    assert not propose_at(passing, folder).empty  # a single run (a PR's probe) decides alone


def test_json_round_trip_and_report_slot(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    results = outcomes(row("NewModel"), lambda c: c.backend == "onnx")
    r = report(results)
    proposal = propose_at(r, folder)
    data = proposal.to_json()
    again = Proposal.from_json(data)
    assert again.entries == proposal.entries and again.patch == proposal.patch
    assert r.with_proposal(proposal).to_json()["proposal"]["entries"][0]["scope"] == "onnx"


def test_failures_the_skiplists_already_cover_are_not_proposed(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    results = outcomes(row("FooModel"), lambda c: c.backend == "onnx")  # FooModel is in `onnx`
    assert propose_at(report(results), folder).empty


def _subsequence(needles, haystack) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


def _lint_clean(folder, before: dict[str, str]):
    """No errors, and no warning the files did not already have (the seed's two redundancies stay)."""
    for name, old in before.items():
        new = (folder / name).read_text()
        assert not lint_text(new, name).errors
        had = {f.message for f in lint_text(old, name).warnings}
        assert {f.message for f in lint_text(new, name).warnings} <= had


GEN_ROW = row("PropModel", generative=True)
PROBED = [c for c in row("FooModel", generative=True) if c.backend == "onnx"]  # the `onnx` entry's cells


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.booleans(), min_size=len(GEN_ROW), max_size=len(GEN_ROW)),
    st.lists(st.booleans(), min_size=len(PROBED), max_size=len(PROBED)),
)
def test_property_applied_proposal_skips_exactly_the_failing_cells(fail_flags, probe_flags):
    with tempfile.TemporaryDirectory() as tmp:
        folder = skiplists_dir(Path(tmp), SKIPS)
        failing = {c for c, f in zip(GEN_ROW, fail_flags) if f}
        results = outcomes(GEN_ROW, lambda c: c in failing)
        still = {c for c, f in zip(PROBED, probe_flags) if f}
        results.update(outcomes(PROBED, lambda c: c in still, probe=True))
        proposal = propose_at(rediff(results, folder), folder)
        apply_at(proposal, folder)
        skiplists = load_skiplists(folder)
        uncoverable = {Cell.parse(u.cell) for u in proposal.uncoverable}
        # New failures: exactly the failing cells are skipped now, except those the walk cannot isolate.
        assert {c for c in GEN_ROW if skiplists.explain(c).skipped} == failing - uncoverable
        # The probed entry: every cell still failing stays skipped, and each FooModel entry left
        # holds a still-failing cell (a passing cell stays skipped only beside one the walk
        # cannot separate it from: narrowing never unskips a failure).
        assert still <= {c for c in PROBED if skiplists.explain(c).skipped}
        for scope, table in skiplists.skips.scopes.items():
            if "FooModel" in table:
                assert any(scope in skip_scopes(c) for c in still), scope
        # And a second round has nothing left to say.
        assert propose_at(rediff(results, folder), folder).empty


def test_apply_onto_a_file_changed_since_the_proposal_redoes_the_edits(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    proposal = propose_at(report(outcomes(row("NewModel"), lambda c: c.backend == "onnx")), folder)
    path = folder / "export_skips.toml"
    path.write_text(path.read_text().replace('FooModel = "Old reason."', 'FooModel = "Edited meanwhile."'))
    assert apply_at(proposal, folder) == [path]
    text = path.read_text()
    assert 'FooModel = "Edited meanwhile."' in text and "NewModel = " in text
    # The JSON form (what `/export-check apply` reads back) carries no file texts and applies the same way.
    (tmp_path / "again").mkdir()
    other = skiplists_dir(tmp_path / "again", SKIPS)
    apply_at(Proposal.from_json(proposal.to_json()), other)
    assert (other / "export_skips.toml").read_text() == proposal.files["export_skips.toml"]


def _drifting(model_class, broken, drifts, *, generative=False):
    """Results where `broken` cells fail at export and `drifts` cells only miss the eager comparison."""
    results = outcomes(row(model_class, generative=generative), broken)
    for cell in results:
        if drifts(cell):
            results[cell] = result(cell, Status.FAILED, stage="compare", message="AssertionError: 7% mismatched")
    return results


@pytest.mark.parametrize(
    "broken, drifts, generative, expected",
    [
        # Only the comparison fails on ONNX: keep exporting, drop the comparison (the seed's BitModel).
        (lambda c: False, lambda c: c.backend == "onnx", False, {"onnx.exactness"}),
        # One skip swallows a drift on the same backend rather than adding a second entry.
        (lambda c: c.backend == "onnx" and not c.dynamic, lambda c: c.backend == "onnx" and c.dynamic, False, {"onnx"}),
        # Forward torch.export compares without a backend scope (the seed's quirk): no exactness scope
        # takes it without ONNX's passing comparison, so it is skipped instead.
        (lambda c: False, lambda c: c.backend == "dynamo", False, {"dynamo"}),
        # Only generate torch.export compares values on the generate path (ONNX and OpenVINO compare
        # names there), so the broader `generate.exactness` takes exactly its cells.
        (lambda c: False, lambda c: c.backend == "dynamo" and c.generate, True, {"generate.exactness"}),
        # ExecuTorch compares counts only: no exactness scope exists for it.
        (lambda c: False, lambda c: c.backend == "executorch", False, {"executorch"}),
    ],
)
def test_comparison_failures_get_exactness_scopes(tmp_path, broken, drifts, generative, expected):
    folder = skiplists_dir(tmp_path, SKIPS)
    results = _drifting("NewModel", broken, drifts, generative=generative)
    proposal = propose_at(rediff(results, folder), folder)
    assert {e.scope for e in proposal.entries} == expected
    apply_at(proposal, folder)
    assert rediff(results, folder).verdict == "success"
    assert propose_at(rediff(results, folder), folder).empty


def test_a_drift_reason_says_it_does_not_match_eager(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS)
    (edit,) = propose_at(
        report(_drifting("NewModel", lambda c: False, lambda c: c.backend == "openvino")), folder
    ).entries
    assert (
        edit.reason
        == "OpenVINO export does not match eager: `AssertionError: 7% mismatched`. TODO: find the root cause."
    )


def test_classes_the_source_cannot_build_are_never_proposed(tmp_path):
    """A llama-only PR whose selection holds classes the zoo has no recipe for: no failure, no entry."""
    folder = tmp_path / "skiplists"
    shutil.copytree(SKIPLISTS, folder)
    results = {c: result(c) for c in row("LlamaForCausalLM", generative=True)}
    for model_class in ("LlamaForQuestionAnswering", "LlamaForTokenClassification"):
        message = f"the zoo has no recipe for {model_class}; add one to bot/models/sources/zoo/recipes.py"
        results.update({c: result(c, Status.NOT_BUILDABLE, message=message) for c in row(model_class)})
    head = ResultSet(results)
    for base in (None, ResultSet({c: result(c) for c in results})):  # no baseline, and a base that passed
        r = diff(base, head, load_skiplists(folder))
        assert r.verdict == "success", r.headline
        assert len(r.category("not_buildable")) == 2 * len(row("LlamaForQuestionAnswering"))
        proposal = propose_at(r, folder)
        assert proposal.empty and not proposal.uncoverable
    # Probing: a skiplisted class the source cannot build says nothing about its skip.
    probed = {c: result(c, Status.NOT_BUILDABLE, message="no recipe", probe=True) for c in PROBED}
    (tmp_path / "p").mkdir()
    probe_folder = skiplists_dir(tmp_path / "p", SKIPS)
    assert propose_at(diff(None, ResultSet(probed), load_skiplists(probe_folder)), probe_folder).empty


def test_entries_of_one_cause_share_one_same_as_chain_across_scopes(tmp_path):
    """Grouped by the report's causes: one guard that breaks AModel everywhere and BModel only on ONNX is one chain."""
    from bot.diff.groups import Culprit, Group

    folder = skiplists_dir(tmp_path, SKIPS)
    guard = "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u{}, 1)"
    results = outcomes(row("AModel"), lambda c: True, message=guard.format(0))
    results.update(outcomes(row("BModel"), lambda c: c.backend == "onnx", message=guard.format(7)))
    results.update(outcomes(row("CModel"), lambda c: c.backend == "onnx", message="ValueError: other"))
    failing = sorted(c for c, r in results.items() if r.status.failing)
    culprit = Culprit("src/transformers/models/a/modeling_a.py", 12, "if int(x.max()) < 0:", changed=True)
    cause = Group(
        "export",
        "GuardOnDataDependentSymNode: … Eq(u…, #)",
        tuple(c.id for c in failing if c.model_class != "CModel"),
        culprit=culprit,
    )  # noqa: E501
    grouped = report(results)
    grouped = type(grouped)(**{**grouped.__dict__, "groups": (cause,)})
    reasons = {(e.scope, e.model_class): e.reason for e in propose_at(grouped, folder).entries}
    assert reasons[("all", "AModel")].startswith(
        "Torch, ONNX, OpenVINO and ExecuTorch (xnnpack) exports fail at stage `export` in "
        "`src/transformers/models/a/modeling_a.py:12`: `GuardOnDataDependentSymNode"
    )  # noqa: E501
    assert reasons[("onnx", "BModel")] == "Same `GuardOnDataDependentSymNode` at stage `export` as `AModel`."
    assert reasons[("onnx", "CModel")].startswith("ONNX export fails at stage `export`: `ValueError: other`")
    # Without the groups the two scopes draft apart: the chain comes from the cause.
    plain = {(e.scope, e.model_class): e.reason for e in propose_at(report(results), folder).entries}
    assert plain[("onnx", "BModel")].startswith("ONNX export fails at stage `export`: `GuardOnDataDependentSymNode")


def test_cells_whose_test_module_did_not_import_are_never_proposed(tmp_path):
    """A setup problem (the checkout's test module does not import) is fixed in the checkout, not skipped."""
    from dataclasses import replace

    folder = tmp_path / "skiplists"
    shutil.copytree(SKIPLISTS, folder)
    message = "ImportError: cannot import name 'X' (tests/generation/test_utils.py raised it while importing …)"
    props = (
        ("setup_module", "tests/models/vit/test_modeling_vit.py"),
        ("setup_origin", "tests/generation/test_utils.py"),
    )
    broken = {
        c: replace(result(c, Status.ERROR, stage="build", kind="build", message=message), properties=props)
        for c in row("ViTModel")
    }
    plain = {
        c: result(c, Status.ERROR, stage="build", kind="build", message="ValueError: tester raised")
        for c in row("BertModel")
    }
    r = diff(None, ResultSet({**broken, **plain}), load_skiplists(folder))
    lines = {line.cell.partition("::")[0]: line for line in r.category("new_failing")}
    assert (
        lines["ViTModel"].setup_module == "tests/models/vit/test_modeling_vit.py"
        and not lines["BertModel"].setup_module
    )
    proposed = {entry.model_class for entry in propose_at(r, folder).entries}
    assert "ViTModel" not in proposed and "BertModel" in proposed  # without the setup flag it would be proposed
