"""The comment's cost line and dashboard links, as the comment job posts them from GitHub's record of the run."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from bot.diff.model import write_report
from tests.github.conftest import make_report
from tests.github.payloads import workflow_run_event

DASHBOARD = "https://codertocat.github.io/Hello-World/"


def _posted(fake, gh, tmp_path, *args, created_at: str | None = None, report=None):
    sha = fake.state.refs["heads/feature"]
    event = workflow_run_event(repo=fake.repo, run_id=9, head_sha=sha, pr_numbers=[1])
    if created_at is not None:
        event["workflow_run"]["created_at"] = created_at
    path = tmp_path / "report.json"
    write_report(report or make_report(head_sha=sha), path)
    result = gh("comment", "--report", str(path), *args, event=event, env={"GITHUB_RUN_ID": "9"})
    return result, fake.bot_comments(1)


def test_the_cost_says_how_long_the_push_took_to_reach_the_comment(fake, gh, tmp_path):
    twelve_minutes_ago = (datetime.now(timezone.utc) - timedelta(minutes=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report = replace(
        make_report(head_sha=fake.state.refs["heads/feature"]),
        cell_seconds=754.0,
        backend_seconds={"dynamo": 150.0, "onnx": 604.0},
        files={"head": ("shard-0/junit.xml", "shard-1/junit.xml", "shard-2/junit.xml")},
    )
    result, [comment] = _posted(fake, gh, tmp_path, created_at=twelve_minutes_ago, report=report)
    assert result.exit_code == 0, result.output
    [cost] = [line for line in comment["body"].splitlines() if line.startswith("Cost:")]
    assert re.fullmatch(
        r"Cost: 1 cell, 13 min of cell time \(CPU: dynamo 2 min, onnx 10 min\) on 3 shards; 1[23] min from push to comment\.",
        cost,
    ), cost


def test_without_a_record_of_the_run_the_cost_says_no_wall_time(fake, gh, tmp_path):
    result, [comment] = _posted(fake, gh, tmp_path, created_at="")
    assert result.exit_code == 0, result.output
    assert "from push to comment" not in comment["body"]


def test_each_cell_named_links_to_its_history_on_the_dashboard(fake, gh, tmp_path):
    sha = fake.state.refs["heads/feature"]
    cells = (("BertModel::test_torch_export", "failed", False), ("GPT2Model::test_onnx_export", "passed", False))
    report = make_report(head_sha=sha, verdict="failure", cells=cells)
    failing = report.cells[0]._replace(base_status="passed")
    report = replace(report, cells=(failing, report.cells[1]), categories={"newly_broken": (failing,)})
    result, [comment] = _posted(fake, gh, tmp_path, "--dashboard-url", DASHBOARD, report=report)
    assert result.exit_code == 0, result.output
    link = f"[`BertModel::test_torch_export`]({DASHBOARD}#cell=BertModel%3A%3Atest_torch_export)"
    assert link in comment["body"]


def test_without_a_dashboard_a_cell_is_named_without_a_link(fake, gh, tmp_path):
    sha = fake.state.refs["heads/feature"]
    failing = make_report(head_sha=sha, cells=(("BertModel::test_torch_export", "failed", False),)).cells[0]
    report = replace(make_report(head_sha=sha, verdict="failure"), categories={"newly_broken": (failing,)})
    result, [comment] = _posted(fake, gh, tmp_path, report=report)
    assert result.exit_code == 0, result.output
    assert "`BertModel::test_torch_export`" in comment["body"] and "#cell=" not in comment["body"]


def test_a_dashboard_url_that_is_not_a_plain_https_address_is_refused(fake, gh, tmp_path):
    for bad in ("http://example.org/", "https://example.org/a b", "https://example.org/#x", "javascript:alert(1)"):
        result, comments = _posted(fake, gh, tmp_path, "--dashboard-url", bad)
        assert result.exit_code == 2, (bad, result.output)
        assert "--dashboard-url" in result.output and "https://OWNER.github.io/REPO/" in result.output
        assert comments == []


def test_a_run_time_without_a_zone_is_utc_as_githubs_are(fake, gh, tmp_path):
    twelve_minutes_ago = (datetime.now(timezone.utc) - timedelta(minutes=12)).strftime("%Y-%m-%dT%H:%M:%S")
    result, [comment] = _posted(fake, gh, tmp_path, created_at=twelve_minutes_ago)
    assert result.exit_code == 0, result.output
    assert re.search(r"1[23] min from push to comment\.", comment["body"]), comment["body"]
