"""The hand-offs into the proposer: the reader's results and the report's lines propose the same edits;
the texts are edited in memory, the folder is read once at the edge and written only by --apply."""

from __future__ import annotations

import json
from pathlib import Path

from bot.diff import diff
from bot.diff.model import Report
from bot.propose.proposal import apply_edits, propose, results_from_report
from bot.results import read_results
from bot.results.model import ResultSet
from bot.skiplist.model import read_skiplists
from tests.conftest import SKIPLISTS
from tests.propose.helpers import outcomes, row, skiplists_dir

JUNIT = Path(__file__).parents[1] / "report" / "data" / "guard_head.xml"
SKIPS = '# ONNX, every variant.\n[onnx]\nFooModel = "Old reason."\n'


def test_the_readers_results_and_the_reports_lines_propose_the_same(tmp_path):
    """A recorded run (real JUnit with tracebacks) and a probe: the report.json round trip changes nothing."""
    head = read_results([JUNIT])
    loaded = read_skiplists(SKIPLISTS)
    report = diff(None, head, loaded.skiplists)
    from_reader = propose(report, head.results, loaded)
    stored = Report.from_json(json.loads(json.dumps(report.to_json())))
    from_json = propose(stored, results_from_report(stored), loaded)
    assert from_reader.entries and from_reader.to_json() == from_json.to_json()

    folder = skiplists_dir(tmp_path, SKIPS)
    loaded = read_skiplists(folder)
    probed = ResultSet(results=outcomes(row("FooModel"), lambda c: c.dynamic, probe=True))
    report = diff(None, probed, loaded.skiplists)
    direct = propose(report, probed.results, loaded)
    assert direct.to_json() == propose(report, results_from_report(report), loaded).to_json()
    assert [(e.action, e.new_scopes) for e in direct.entries] == [("narrow", ("onnx.dynamic",))]


def test_texts_are_edited_in_memory_and_carriage_returns_are_kept(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS.replace("\n", "\r\n"))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    loaded = read_skiplists(folder)
    texts = loaded.texts
    probed = ResultSet(results=outcomes(row("FooModel"), lambda c: False, probe=True))
    proposal = propose(diff(None, probed, loaded.skiplists), probed.results, loaded)
    assert set(proposal.files) == {"export_skips.toml"} and "FooModel" not in proposal.files["export_skips.toml"]
    assert proposal.files["export_skips.toml"].startswith("# ONNX, every variant.\r\n")
    assert apply_edits(proposal.entries, texts) == dict(proposal.files)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skiplists"]  # and no folder beside it
