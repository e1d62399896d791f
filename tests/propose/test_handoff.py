"""The hand-offs into the proposer: the reader's results and the report's lines propose the same edits;
the texts are edited in memory, the folder is read once at the edge and written only by --apply."""

from __future__ import annotations

import json
from pathlib import Path

from bot.diff import diff
from bot.diff.model import Report
from bot.propose.proposal import apply_edits, propose, results_from_report
from bot.propose.texts import parse_texts, read_texts
from bot.results import read_results
from bot.results.model import ResultSet
from tests.conftest import SKIPLISTS
from tests.propose.helpers import outcomes, row, skiplists_dir

JUNIT = Path(__file__).parents[1] / "report" / "data" / "guard_head.xml"
SKIPS = '# ONNX, every variant.\n[onnx]\nFooModel = "Old reason."\n'


def test_the_readers_results_and_the_reports_lines_propose_the_same(tmp_path):
    """A recorded run (real JUnit with tracebacks) and a probe: the report.json round trip changes nothing."""
    head = read_results([JUNIT])
    texts = read_texts(SKIPLISTS)
    skiplists = parse_texts(texts, SKIPLISTS)
    report = diff(None, head, skiplists)
    from_reader = propose(report, head.results, skiplists, texts)
    stored = Report.from_json(json.loads(json.dumps(report.to_json())))
    from_json = propose(stored, results_from_report(stored), skiplists, texts)
    assert from_reader.entries and from_reader.to_json() == from_json.to_json()

    folder = skiplists_dir(tmp_path, SKIPS)
    texts = read_texts(folder)
    probed = ResultSet(results=outcomes(row("FooModel"), lambda c: c.dynamic, probe=True))
    report = diff(None, probed, parse_texts(texts, folder))
    direct = propose(report, probed.results, parse_texts(texts, folder), texts)
    assert direct.to_json() == propose(report, results_from_report(report), parse_texts(texts, folder), texts).to_json()
    assert [(e.action, e.new_scopes) for e in direct.entries] == [("narrow", ("onnx.dynamic",))]


def test_texts_are_edited_in_memory_and_carriage_returns_are_kept(tmp_path):
    folder = skiplists_dir(tmp_path, SKIPS.replace("\n", "\r\n"))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    texts = read_texts(folder)
    probed = ResultSet(results=outcomes(row("FooModel"), lambda c: False, probe=True))
    proposal = propose(
        diff(None, probed, parse_texts(texts, folder)), probed.results, parse_texts(texts, folder), texts
    )
    assert set(proposal.files) == {"export_skips.toml"} and "FooModel" not in proposal.files["export_skips.toml"]
    assert proposal.files["export_skips.toml"].startswith("# ONNX, every variant.\r\n")
    assert apply_edits(proposal.entries, texts) == dict(proposal.files)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skiplists"]  # and no folder beside it
