"""`/export-check` comments end to end: permission, acknowledgement, the pinned request, verify-sha, apply."""

from __future__ import annotations

import json

import pytest

from bot.publish.command import Request, help_text
from tests.github.conftest import (
    ENTRY,
    MAINTAINER,
    READER,
    WRITER,
    add_pr_report,
    comment_event,
    make_report,
    outputs,
    propose_on_feature,
    report_zip,
)


def test_a_reader_is_refused_with_a_reply_and_no_run(fake, gh):
    result = gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check", READER))
    assert result.exit_code == 0, result.output
    [reply] = fake.bot_comments(1)
    assert "write, maintain or admin" in reply["body"] and f"@{READER}" in reply["body"]
    assert fake.state.dispatches == []
    assert fake.state.reactions[500] == ["confused"]
    assert outputs(gh.output)["accepted"] == "false"


@pytest.mark.parametrize("author", [WRITER, MAINTAINER])
def test_a_writer_is_acknowledged_and_the_request_pinned_and_dispatched(fake, gh, tmp_path, author):
    body = "/export-check BertModel llama --backend onnx,openvino --dynamic --generate\nplease"
    out = tmp_path / "request.json"
    result = gh(
        "command", "--dispatch", "export-conformance.yml", "--out", str(out), event=comment_event(fake, body, author)
    )
    assert result.exit_code == 0, result.output
    head = fake.state.refs["heads/feature"]
    request = Request.from_json(out.read_text())
    assert request == Request(
        "models",
        models=("BertModel", "llama"),
        backends=("onnx", "openvino"),
        shapes=("dynamic",),
        generate=True,
        pr=1,
        head_sha=head,
        comment_id=500,
    )
    assert fake.state.reactions[500] == ["eyes"]
    [dispatch] = fake.state.dispatches
    assert dispatch["workflow"] == "export-conformance.yml" and dispatch["ref"] == "main"
    assert dispatch["inputs"]["sha"] == head and Request.from_json(dispatch["inputs"]["request"]) == request
    assert dispatch["inputs"]["comment"] == "500"  # the run is named after it, to finish with 🚀 or 😕
    found = outputs(gh.output)
    assert found["accepted"] == "true" and found["sha"] == head and json.loads(found["request"])["kind"] == "models"
    assert fake.bot_comments(1) == []  # acknowledged with 👀, no reply


def test_names_come_from_the_default_branchs_checkout_on_the_light_install(fake, gh, tmp_path, monkeypatch):
    """The command job installs no transformers: the checkout's model sources name the classes."""
    import bot.models.index

    monkeypatch.setattr(bot.models.index, "installed_models_dir", lambda: None)  # as with the light install
    bot.models.index.installed_index.cache_clear()
    try:
        out = tmp_path / "request.json"
        body = "/export-check LlamaForCausalLM bert"
        result = gh(
            "command", "--dispatch", "export-conformance.yml", "--out", str(out), event=comment_event(fake, body)
        )
        assert result.exit_code == 0, result.output
        assert Request.from_json(out.read_text()).models == ("LlamaForCausalLM", "bert")
        assert fake.bot_comments(1) == [] and len(fake.state.dispatches) == 1
    finally:
        bot.models.index.installed_index.cache_clear()


def test_unknown_words_are_answered_with_the_help_text(fake, gh):
    assert gh("command", event=comment_event(fake, "/export-check BertModl --fast")).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert "`BertModl` is not a model class" in reply["body"] and "BertModel" in reply["body"]
    assert help_text() in reply["body"] and fake.state.dispatches == []


@pytest.mark.parametrize("kw", [{"action": "edited"}, {"action": "deleted"}, {"on_pr": False}])
def test_edited_deleted_and_issue_comments_are_ignored(fake, gh, kw):
    assert gh("command", event=comment_event(fake, "/export-check", **kw)).exit_code == 0
    assert fake.requests == [] and outputs(gh.output)["accepted"] == "false"


def test_bot_comments_are_ignored(fake, gh):
    assert gh("command", event=comment_event(fake, "/export-check", "dependabot[bot]")).exit_code == 0
    assert fake.requests == []


def test_a_moved_head_stops_the_run(fake, gh):
    pinned = fake.state.refs["heads/feature"]
    assert gh("verify-sha", "--pr", "1", "--sha", pinned).exit_code == 0
    fake.state.refs["heads/feature"] = fake.commit({"src/x.py": "x = 2\n"}, (pinned,), "push")
    result = gh("verify-sha", "--pr", "1", "--sha", pinned)
    assert result.exit_code == 1
    assert f"moved from {pinned[:12]}" in result.output and "this run stops" in result.output


def test_apply_commits_the_proposed_patch_to_the_pr_branch(fake, gh):
    head = propose_on_feature(fake)
    result = gh("apply", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 0, result.output
    new_head = fake.state.refs["heads/feature"]
    assert new_head != head and fake.state.commits[new_head]["parents"] == [head]
    before, after = (
        fake.files_at(head)["skiplists/export_skips.toml"],
        fake.files_at(new_head)["skiplists/export_skips.toml"],
    )
    line = 'MMGroundingDinoForObjectDetection = "Same as `GroundingDinoModel`."\n'
    assert before.replace(line, "", 1) == after and line in before
    assert fake.state.reactions[500] == ["rocket"]
    assert fake.state.dispatches[-1]["inputs"]["sha"] == new_head


def test_apply_without_a_report_for_the_head_says_so(fake, gh):
    report = make_report(head_sha="0" * 40, proposal={"entries": [ENTRY]})
    fake.add_run("export-conformance.yml", head_sha="0" * 40, artifacts={"export-report": report_zip(report)})
    result = gh("apply", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2  # a refusal, not a failed verdict
    [reply] = fake.bot_comments(1)
    assert "no conformance report for the current head" in reply["body"]


def test_apply_on_a_fork_gets_one_reply_carrying_the_patch(fake, gh):
    fork_head = fake.commit({"src/x.py": "x = 3\n"}, (fake.state.refs["heads/main"],), "fork change")
    fake.open_pull(9, "patch-1", fork="someone/Hello-World", head_sha=fork_head)
    # The report's own `patch` text was written by the fork's code: the bot never echoes it.
    report = make_report(head_sha=fork_head, proposal={"entries": [ENTRY], "patch": "@everyone rm -rf"})
    add_pr_report(fake, report, branch="patch-1", head_repo="someone/Hello-World")
    event = comment_event(fake, "/export-check apply", number=9)
    # The workflow runs both jobs on the comment: `command`, then `apply`.
    assert gh("command", "--dispatch", "export-conformance.yml", event=event).exit_code == 0
    assert gh("apply", "--dispatch", "export-conformance.yml", event=event).exit_code == 0
    [reply] = fake.bot_comments(9)
    assert "someone/Hello-World" in reply["body"] and "```diff" in reply["body"]
    assert "-MMGroundingDinoForObjectDetection = " in reply["body"]
    assert "--- a/skiplists/export_skips.toml" in reply["body"] and "@everyone" not in reply["body"]
    assert fake.state.dispatches == [] and fake.state.refs["heads/main"] != fork_head
    assert outputs(gh.output)["accepted"] == "false"


def test_apply_on_a_fork_without_a_report_says_there_is_no_patch_yet(fake, gh):
    fake.open_pull(9, "patch-1", fork="someone/Hello-World", head_sha="f" * 40)
    assert gh("command", event=comment_event(fake, "/export-check apply", number=9)).exit_code == 0
    [reply] = fake.bot_comments(9)
    assert "no conformance report for the current head" in reply["body"] and "```" not in reply["body"]


def test_the_refusal_quotes_the_role_not_the_legacy_permission(fake, gh):
    fake.state.permissions["octo-triager"] = "triage"  # GitHub's legacy `permission` field says `read`
    assert gh("command", event=comment_event(fake, "/export-check", "octo-triager")).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert "(yours: `triage`)" in reply["body"] and "`read`" not in reply["body"]


def test_a_custom_role_based_on_write_may_run_commands(fake, gh):
    fake.state.permissions["octo-ci"] = "ci-runner:write"
    result = gh(
        "command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check", "octo-ci")
    )
    assert result.exit_code == 0, result.output
    assert len(fake.state.dispatches) == 1 and fake.bot_comments(1) == []


def test_a_closed_pr_gets_a_polite_refusal_and_no_run(fake, gh):
    fake.close_pull(1)
    assert (
        gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check")).exit_code == 0
    )
    [reply] = fake.bot_comments(1)
    assert "#1 is closed" in reply["body"] and "Reopen it" in reply["body"]
    assert fake.state.dispatches == [] and fake.state.reactions[500] == ["confused"]


def test_a_failed_dispatch_gets_confused_and_a_reply(fake, gh):
    fake.inject("status", method="POST", path=r"/dispatches$", times=100, status=500)
    result = gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check"))
    # GitHub refusing is exit 2, never 1: exit 1 means cells broke.
    assert result.exit_code == 2 and "dispatch workflow export-conformance.yml: HTTP 500" in result.output
    [reply] = fake.bot_comments(1)
    assert "could not start the conformance run" in reply["body"] and "HTTP 500" in reply["body"]
    assert fake.state.reactions[500][-1] == "confused" and fake.state.runs == []


def test_a_dispatch_answered_502_after_it_took_effect_starts_one_run(fake, gh):
    fake.run_list_lag = 2  # the run is listed a little after GitHub accepted the dispatch
    fake.inject("status", method="POST", path=r"/dispatches$", times=3, status=502, after=True)
    result = gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check"))
    assert result.exit_code == 0, result.output
    [run] = fake.state.runs
    assert run["title"] == "export-conformance #1: /export-check rerun (comment 500)"
    assert len(fake.state.dispatches) == 1 and fake.state.reactions[500] == ["eyes"]
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/dispatches")) == 1
    assert fake.bot_comments(1) == [] and outputs(gh.output)["accepted"] == "true"


def test_a_dispatch_turned_away_with_502_is_made_again(fake, gh):
    # A 502 before the request reached GitHub: no run appears, so the dispatch is repeated.
    fake.inject("status", method="POST", path=r"/dispatches$", times=1, status=502)
    assert (
        gh("command", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check")).exit_code == 0
    )
    assert len(fake.state.runs) == 1 and len(fake.state.dispatches) == 1
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/dispatches")) == 2


def test_a_reply_answered_502_after_it_took_effect_is_posted_once(fake, gh):
    fake.inject("status", method="POST", path=r"/issues/1/comments$", times=2, status=502, after=True)
    result = gh("command", event=comment_event(fake, "/export-check help"))
    assert result.exit_code == 0, result.output
    [reply] = fake.bot_comments(1)
    assert help_text() in reply["body"] and "<!-- export-bot:reply-to 500 -->" in reply["body"]
    assert sum(1 for m, p in fake.requests if m == "POST" and p.endswith("/issues/1/comments")) == 1


def test_a_reply_to_a_line_of_ten_thousand_bad_words_fits_and_names_a_few(fake, gh):
    words = " ".join(f"w{i % 1000:03d}" for i in range(2500))
    body = f"/export-check {words}"[:10_000]
    assert gh("command", event=comment_event(fake, body)).exit_code == 0
    [reply] = fake.bot_comments(1)
    assert len(reply["body"]) < 65536
    assert reply["body"].count("is not a model class") == 5
    assert "… and " in reply["body"] and " more problems (" in reply["body"]


def test_echoed_words_cannot_leave_their_code_span_or_mention_anyone(fake, gh):
    assert gh("command", event=comment_event(fake, "/export-check x`@octo-org/team`")).exit_code == 0
    [reply] = fake.bot_comments(1)
    first = reply["body"].split("\n")[2]
    assert "@octo-org" not in reply["body"] and first.count("`") == 2, first


# GitHub's own answers when it refuses a git object: 422 with a `validation-error` body.
TREE_REFUSED = {
    "message": "GitRPC::BadObjectState",
    "documentation_url": "https://docs.github.com/rest/git/trees#create-a-tree",
    "status": "422",
}
COMMIT_REFUSED = {
    "message": "Tree SHA does not exist",
    "documentation_url": "https://docs.github.com/rest/git/commits#create-a-commit",
    "status": "422",
}


@pytest.mark.parametrize(
    "path, status, body",
    [
        (r"/git/trees$", 422, TREE_REFUSED),
        (r"/git/commits$", 422, COMMIT_REFUSED),
        (r"/git/commits$", 500, None),  # every retry answered 500
        (r"/git/refs/heads/feature$", 500, None),  # the fast-forward itself
    ],
)
def test_apply_refused_by_github_mid_commit_is_answered_once_and_commits_nothing(fake, gh, path, status, body):
    head = propose_on_feature(fake)
    fake.inject("status", method="POST|PATCH", path=path, status=status, body=body, times=100)
    event = comment_event(fake, "/export-check apply")
    assert gh("command", "--dispatch", "export-conformance.yml", event=event).exit_code == 0
    for _ in range(2):  # the job, then a re-run of it
        result = gh("apply", "--dispatch", "export-conformance.yml", event=event)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert "error: apply: nothing was committed: GitHub refused" in result.output
        [reply] = fake.bot_comments(1)
        assert "nothing was committed" in reply["body"] and "`/export-check apply`" in reply["body"]
        assert fake.state.reactions[500][-1] == "confused"
        assert fake.state.refs["heads/feature"] == head and fake.state.dispatches == []
        assert outputs(gh.output)["accepted"] == "false"


def test_apply_whose_fast_forward_answer_was_lost_is_a_commit(fake, gh):
    """GitHub moved the branch but the answers were lost: the branch read back says it was committed."""
    head = propose_on_feature(fake)
    fake.inject("status", method="PATCH", path=r"/git/refs/heads/feature$", status=502, after=True, times=100)
    result = gh("apply", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 0, result.output
    new_head = fake.state.refs["heads/feature"]
    assert fake.state.commits[new_head]["parents"] == [head]
    [reply] = fake.bot_comments(1)
    assert f"Committed the proposed skiplist edits as {new_head}" in reply["body"]
    assert fake.state.reactions[500] == ["rocket"] and fake.state.dispatches[-1]["inputs"]["sha"] == new_head


def test_apply_answers_when_github_refuses_to_list_the_runs(fake, gh):
    # GitHub refusing the run listing (after the client's retries) before any proposal is read: the
    # command still ends with 😕 and one reply, and nothing is committed.
    head = fake.state.refs["heads/feature"]
    fake.inject("status", method="GET", path=r"/actions/workflows/.*/runs$", status=500, times=100)
    result = gh("apply", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    [reply] = fake.bot_comments(1)
    assert "could not be read" in reply["body"] and "nothing was committed" in reply["body"]
    assert fake.state.reactions[500][-1] == "confused"
    assert fake.state.refs["heads/feature"] == head


def test_apply_then_its_run_leaving_no_report_says_why_beside_the_confused(fake, gh, tmp_path):
    """`apply` replied to its comment already; the run it dispatched answers the same comment, in words too."""
    propose_on_feature(fake)
    event = comment_event(fake, "/export-check apply")
    assert gh("apply", "--dispatch", "export-conformance.yml", event=event).exit_code == 0
    [run] = [r["id"] for r in fake.state.runs if r["event"] == "workflow_dispatch"]
    fake.finish_run(run, "failure")
    result = gh("comment", "--report", str(tmp_path / "none" / "report.json"), event=fake.run_event(run, "completed"))
    assert result.exit_code == 2
    committed, why = [c["body"] for c in fake.bot_comments(1)]
    assert committed.startswith("Committed the proposed skiplist edits")
    assert "left no report" in why and f"/actions/runs/{run}" in why
    assert fake.state.reactions[500][-1] == "confused"


def test_apply_edits_the_skiplist_folder_the_settings_name(fake, gh, config):
    """No --skiplists-path: `[tool.export-bot] skiplists` of the checked-out default branch says where the files are."""
    start = fake.state.refs["heads/feature"]
    moved = {
        f"ci/export-skips/{name}": text for name, text in fake.files_at(start).items() if name.startswith("skiplists/")
    }
    moved = {path.replace("ci/export-skips/skiplists/", "ci/export-skips/"): text for path, text in moved.items()}
    fake.state.refs["heads/feature"] = fake.commit(moved, (start,), "skiplists moved to ci/export-skips")
    head = propose_on_feature(fake)
    config.write_text(config.read_text(encoding="utf-8") + 'skiplists = "ci/export-skips"\n', encoding="utf-8")
    result = gh("apply", "--dispatch", "export-conformance.yml", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 0, result.output
    new_head = fake.state.refs["heads/feature"]
    before, after = fake.files_at(head), fake.files_at(new_head)
    line = 'MMGroundingDinoForObjectDetection = "Same as `GroundingDinoModel`."\n'
    moved_file = "ci/export-skips/export_skips.toml"
    assert line in before[moved_file] and before[moved_file].replace(line, "", 1) == after[moved_file]
    assert after["skiplists/export_skips.toml"] == before["skiplists/export_skips.toml"], (
        "the old folder is not the one"
    )
