"""`/export-check apply` and the fork's patch on a report whose proposal is malformed: exit 2, one line, no commit."""

from __future__ import annotations

import json

import pytest

from tests.github.conftest import ENTRY, comment_event, make_report, zipped

BAD = [
    pytest.param({k: v for k, v in ENTRY.items() if k != "action"}, "proposal.entries[0].action", id="no-action"),
    pytest.param(dict(ENTRY, action="rename"), "proposal.entries[0].action", id="unknown-action"),
    pytest.param(dict(ENTRY, file="../.github/workflows/x.toml"), "proposal.entries[0].file", id="foreign-file"),
]


def _forged_run(fake, head: str, entry: dict, branch: str, head_repo: str | None = None) -> None:
    data = make_report(head_sha=head).to_json()
    data["proposal"] = {"entries": [entry], "patch": ""}
    fake.add_run(
        "export-conformance.yml",
        head_sha=head,
        branch=branch,
        event="pull_request",
        artifacts={"export-report": zipped({"report.json": json.dumps(data)})},
        head_repo=head_repo,
    )


def _one_error_line(output: str, field: str) -> None:
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and f"field `{field}`" in errors[0], output


@pytest.mark.parametrize("entry, field", BAD)
def test_apply_on_a_malformed_proposal_exits_2_with_one_line_and_commits_nothing(fake, gh, entry, field):
    head = fake.state.refs["heads/feature"]
    _forged_run(fake, head, entry, "feature")
    result = gh("apply", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, field)
    assert fake.state.refs["heads/feature"] == head and fake.state.dispatches == []


@pytest.mark.parametrize("entry, field", BAD)
def test_a_fork_apply_on_a_malformed_proposal_exits_2_with_one_line(fake, gh, entry, field):
    fork_head = fake.commit({"src/x.py": "x = 3\n"}, (fake.state.refs["heads/main"],), "fork change")
    fake.open_pull(9, "patch-1", fork="someone/Hello-World", head_sha=fork_head)
    _forged_run(fake, fork_head, entry, "patch-1", head_repo="someone/Hello-World")  # the fork's own run
    result = gh(
        "command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check apply", number=9)
    )
    assert result.exit_code == 2, result.output
    _one_error_line(result.output, field)
