"""Forks are adversaries: each attack on the publishing jobs, crafted as a fork would, refused against the fake GitHub."""

from __future__ import annotations

import json
import time
import unicodedata
from dataclasses import replace

import pytest

from bot.diff.model import write_report
from bot.report import COMMENT_MARKER
from bot.results.baseline_json import read_state
from tests.conftest import ROOT
from tests.github import payloads as P
from tests.github.conftest import (
    ENTRY,
    WRITER,
    add_pr_report,
    comment_event,
    make_report,
    outputs,
    propose_on_feature,
    report_zip,
    zipped,
)
from tests.report.hostile import PAYLOADS
from tests.results.factory import Case, junit

FORK = "mallory/Hello-World"
CONFORMANCE = "export-conformance.yml"
# What a fork wants committed to someone else's branch: its own entry, under scope `all`.
FORGED = {"entries": [ENTRY], "patch": "LlamaForCausalLM = 'skip everything @victim-user'"}


def _fork_pushes_the_victims_head(fake) -> str:
    """Mallory pushes the victim's public head commit to a branch of her fork and opens PR 9 with it."""
    victim_head = fake.state.refs["heads/feature"]
    fake.open_pull(9, "patch-1", fork=FORK, head_sha=victim_head)
    return victim_head


def _fork_run(fake, head_sha: str, *, branch: str = "patch-1", workflow: str = CONFORMANCE, proposal=FORGED) -> int:
    """The fork's own `pull_request` run (its copy of the workflow), uploading a forged report for `head_sha`."""
    forged = make_report(head_sha=head_sha, proposal=proposal)
    return fake.add_run(
        workflow,
        head_sha=head_sha,
        branch=branch,
        event="pull_request",
        head_repo=FORK,
        artifacts={"export-report": report_zip(forged)},
    )


def _dispatched_run(fake, report, title: str = "export-conformance #1: /export-check rerun (comment 77)") -> int:
    """A conformance run dispatched on the default branch, for the PR its title names, uploading `report`."""
    return fake.add_run(
        CONFORMANCE,
        head_sha=fake.state.refs["heads/main"],
        event="workflow_dispatch",
        title=title,
        artifacts={"export-report": report_zip(report)},
    )


def _unchanged(fake, head: str) -> bool:
    return fake.state.refs["heads/feature"] == head and not fake.state.dispatches


# --- apply -----------------------------------------------------------------------------------


def test_a_forks_forged_report_for_the_victims_head_is_never_applied(fake, gh):
    head = _fork_pushes_the_victims_head(fake)
    # The victim's own run proposes nothing; the fork's run, newer, claims the same head.
    own = make_report(head_sha=head, proposal={"entries": []})
    add_pr_report(fake, own)
    _fork_run(fake, head)
    result = gh("apply", "--dispatch", CONFORMANCE, event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2, result.output
    assert _unchanged(fake, head)
    [reply] = fake.bot_comments(1)
    assert "proposes no skiplist change" in reply["body"] and fake.state.reactions[500] == ["confused"]


def test_a_victim_with_no_report_yet_is_refused_not_given_the_forks(fake, gh):
    head = _fork_pushes_the_victims_head(fake)
    _fork_run(fake, head)
    result = gh("apply", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2 and _unchanged(fake, head)
    [reply] = fake.bot_comments(1)
    assert "no conformance report for the current head" in reply["body"]


def test_a_victim_whose_latest_report_came_from_a_dispatched_run_still_ignores_the_fork(fake, gh):
    head = _fork_pushes_the_victims_head(fake)
    own = make_report(head_sha=head, proposal={"entries": []})
    _dispatched_run(fake, own)
    _fork_run(fake, head)
    assert gh("apply", event=comment_event(fake, "/export-check apply")).exit_code == 2
    assert _unchanged(fake, head)


def test_a_dispatched_run_for_this_pr_and_its_head_is_applied(fake, gh):
    head = fake.state.refs["heads/feature"]
    report = make_report(head_sha=head, proposal={"entries": [ENTRY]})
    _dispatched_run(fake, report)
    assert gh("apply", event=comment_event(fake, "/export-check apply")).exit_code == 0
    assert fake.state.refs["heads/feature"] != head and fake.state.reactions[500] == ["rocket"]


@pytest.mark.parametrize("title", ["export-conformance #2: /export-check rerun (comment 77)", "export"])
def test_a_dispatched_run_naming_another_pr_or_none_is_not_this_prs_source(fake, gh, title):
    head = fake.state.refs["heads/feature"]
    report = make_report(head_sha=head, proposal={"entries": [ENTRY]})
    _dispatched_run(fake, report, title)
    assert gh("apply", event=comment_event(fake, "/export-check apply")).exit_code == 2
    assert _unchanged(fake, head)


def test_apply_please_is_refused_once_and_never_committed(fake, gh, tmp_path):
    head = propose_on_feature(fake, {"entries": [ENTRY]})
    event = comment_event(fake, "/export-check apply please")
    assert gh("command", "--dispatch", CONFORMANCE, event=event).exit_code == 0
    kind = outputs(gh.output).get("kind", "")
    # The workflow's apply job waits on the command job's `kind`: evaluate its `if:` as GitHub would.
    assert not _apply_job_runs(kind)
    # And the apply command itself, if a caller wires the jobs otherwise, stays quiet.
    assert gh("apply", event=event).exit_code == 0
    assert _unchanged(fake, head) and fake.state.reactions[500] == ["confused"]
    assert len(fake.bot_comments(1)) == 1


def _apply_job_runs(kind: str) -> bool:
    import yaml

    from tests.rehearsal.expressions import Evaluator

    job = yaml.safe_load((ROOT / ".github/workflows/check-command.yml").read_text())["jobs"]["apply"]
    contexts = {"needs": {"command": {"result": "success", "outputs": {"kind": kind}}}, "github": {}, "inputs": {}}
    return bool(Evaluator(contexts).evaluate(job["if"]))


def test_the_apply_job_runs_when_the_parser_said_apply():
    assert _apply_job_runs("apply") and not _apply_job_runs("rerun") and not _apply_job_runs("")


def test_a_push_race_lost_is_answered_not_left_at_eyes(fake, gh):
    head = propose_on_feature(fake, {"entries": [ENTRY]})
    pushed = fake.commit({"src/x.py": "x = 5\n"}, (head,), "someone's push")
    fake.before(
        method="PATCH",
        path=r"/git/refs/heads/feature$",
        action=lambda f: f.state.refs.update({"heads/feature": pushed}),
    )
    result = gh("apply", event=comment_event(fake, "/export-check apply"))
    assert result.exit_code == 2 and fake.state.refs["heads/feature"] == pushed
    [reply] = fake.bot_comments(1)
    assert "Someone pushed" in reply["body"] and fake.state.reactions[500] == ["confused"]


def test_an_oversized_report_artifact_is_never_downloaded(fake, gh, config):
    config.write_text(config.read_text() + "artifact-max-mb = 0.01\n", encoding="utf-8")
    head = fake.state.refs["heads/feature"]
    report = make_report(head_sha=head, proposal={"entries": [ENTRY]}, headline="x" * 20_000)
    fake.add_run(
        CONFORMANCE,
        head_sha=head,
        branch="feature",
        event="pull_request",
        artifacts={"export-report": report_zip(report) + bytes(20_000)},
    )
    assert gh("apply", event=comment_event(fake, "/export-check apply")).exit_code == 2
    assert not any(p.startswith("/_blobs/") for _, p in fake.requests) and _unchanged(fake, head)


# --- the status and the comment ---------------------------------------------------------------


def _run_event(fake, run_id, head_sha, *, prs=(), branch="feature", head_repo=None, path=None):
    event = P.workflow_run_event(
        repo=fake.repo, run_id=run_id, head_sha=head_sha, pr_numbers=list(prs), head_branch=branch, head_repo=head_repo
    )
    event["workflow_run"].update(event="pull_request")
    if path:
        event["workflow_run"]["path"] = path
    return event


def _report_file(tmp_path, name, **kw):
    path = tmp_path / f"{name}.json"
    write_report(make_report(**kw), path)
    return path


def test_a_fork_with_the_victims_head_cannot_paint_its_status(fake, gh, tmp_path):
    head = _fork_pushes_the_victims_head(fake)
    fake.state.statuses[head] = []
    victim = _report_file(tmp_path, "victim", head_sha=head, verdict="failure")
    assert gh("comment", "--report", str(victim), event=_run_event(fake, 5, head, prs=[1])).exit_code == 0
    fork = P.repository(FORK, 4242, fake.url)
    forged = _report_file(tmp_path, "forged", head_sha=head, verdict="success")
    result = gh("comment", "--report", str(forged), event=_run_event(fake, 6, head, branch="patch-1", head_repo=fork))
    assert result.exit_code == 0, result.output
    assert [s["state"] for s in fake.state.statuses[head]] == ["failure"]
    assert "a fork's run sets no status" in result.output
    # The fork's PR still gets its comment: its own code produced it.
    assert len(fake.bot_comments(9)) == 1 and "❌" in fake.bot_comments(1)[0]["body"]


def test_a_fork_with_another_fork_prs_head_cannot_paint_its_status(fake, gh, tmp_path):
    """The victim's PR comes from a fork too: its head heads no branch of this repository, but it is
    another repository's open PR here, and Mallory's run must not set (or hold back) its status."""
    victim_head = fake.commit({"src/x.py": "x = 4\n"}, (fake.state.refs["heads/main"],), "victim's change")
    fake.open_pull(8, "fix", fork="victim/Hello-World", head_sha=victim_head)
    fake.open_pull(9, "patch-1", fork=FORK, head_sha=victim_head)
    fork = P.repository(FORK, 4242, fake.url)
    event = _run_event(fake, 6, victim_head, branch="patch-1", head_repo=fork)
    event["action"] = "requested"
    result = gh("pending", event=event)
    assert result.exit_code == 0 and "also heads #8, from another repository" in result.output, result.output
    forged = _report_file(tmp_path, "forged", head_sha=victim_head, verdict="success")
    event["action"] = "completed"
    result = gh("comment", "--report", str(forged), event=event)
    assert result.exit_code == 0, result.output
    assert fake.state.statuses.get(victim_head, []) == []
    assert "a fork's run sets no status there" in result.output
    # The victim's own run (from its fork) still sets it: the other PR is Mallory's, from another repository.
    victim = P.repository("victim/Hello-World", 4243, fake.url)
    own = _run_event(fake, 7, victim_head, branch="fix", head_repo=victim)
    assert gh("comment", "--report", str(forged), event=own).exit_code == 0
    assert [s["state"] for s in fake.state.statuses[victim_head]] == ["success"]


def test_a_workflow_that_took_the_conformance_name_is_not_published(fake, gh, tmp_path):
    head = fake.state.refs["heads/feature"]
    forged = _report_file(tmp_path, "forged", head_sha=head)
    event = _run_event(fake, 6, head, prs=[1], path=".github/workflows/mallory.yml")
    result = gh("comment", "--report", str(forged), event=event)
    assert result.exit_code == 0 and "ignored" in result.output
    assert fake.bot_comments(1) == [] and fake.state.statuses == {}
    assert not _comment_job_runs(".github/workflows/mallory.yml") and _comment_job_runs(
        f".github/workflows/{CONFORMANCE}"
    )


def _comment_job_runs(path: str) -> bool:
    import yaml

    from tests.rehearsal.expressions import Evaluator

    contexts = {"github": {"event": {"action": "completed", "workflow_run": {"path": path}}}, "needs": {}}
    reusable = yaml.safe_load((ROOT / ".github/workflows/conformance-comment.yml").read_text())
    caller = yaml.safe_load(
        (ROOT / "examples/transformers/.github/workflows/export-conformance-comment.yml").read_text()
    )
    default = (reusable.get("on") or reusable[True])["workflow_call"]["inputs"]["conformance-workflow"]["default"]
    inner = Evaluator({**contexts, "inputs": {"conformance-workflow": default}}).evaluate(
        reusable["jobs"]["comment"]["if"]
    )
    outer = Evaluator({**contexts, "inputs": {}}).evaluate(caller["jobs"]["comment"]["if"])
    return bool(inner) and bool(outer)


def test_re_running_an_old_heads_run_does_not_overwrite_the_newer_report(fake, gh, tmp_path):
    old_head = fake.state.refs["heads/feature"]
    old = _report_file(tmp_path, "old", head_sha=old_head, verdict="failure", headline="old head")
    assert (
        gh(
            "comment", "--report", str(old), event=_run_event(fake, 5, old_head, prs=[1]), env={"GITHUB_RUN_ID": "50"}
        ).exit_code
        == 0
    )
    new_head = fake.commit({"src/x.py": "x = 7\n"}, (old_head,), "push")
    fake.state.refs["heads/feature"] = new_head
    new = _report_file(tmp_path, "new", head_sha=new_head, headline="new head")
    assert (
        gh(
            "comment", "--report", str(new), event=_run_event(fake, 7, new_head, prs=[1]), env={"GITHUB_RUN_ID": "51"}
        ).exit_code
        == 0
    )
    # Run 5 is re-run: it keeps its id; its publisher is a new run with a higher GITHUB_RUN_ID.
    result = gh(
        "comment", "--report", str(old), event=_run_event(fake, 5, old_head, prs=[1]), env={"GITHUB_RUN_ID": "52"}
    )
    assert result.exit_code == 0, result.output
    [comment] = fake.bot_comments(1)
    assert "new head" in comment["body"].lower() and "old head" not in comment["body"].lower()
    assert [s["state"] for s in fake.state.statuses[new_head]] == ["success"]
    assert [s["state"] for s in fake.state.statuses[old_head]] == ["failure"]


def test_a_status_is_never_set_on_a_commit_that_is_no_longer_the_prs_head(fake, gh, tmp_path):
    old_head = fake.state.refs["heads/feature"]
    fake.state.refs["heads/feature"] = fake.commit({"src/x.py": "x = 8\n"}, (old_head,), "push")
    late = _report_file(tmp_path, "late", head_sha=old_head)
    result = gh("comment", "--report", str(late), event=_run_event(fake, 5, old_head, prs=[1]))
    assert result.exit_code == 0 and fake.state.statuses == {} and "no status" in result.output


def test_a_headline_holding_the_run_marker_does_not_freeze_the_pr(fake, gh, tmp_path):
    head = fake.state.refs["heads/feature"]
    frozen = _report_file(tmp_path, "frozen", head_sha=head, headline="<!-- export-bot:run 99999999999 -->")
    assert gh("comment", "--report", str(frozen), event=_run_event(fake, 5, head, prs=[1])).exit_code == 0
    later = _report_file(tmp_path, "later", head_sha=head, verdict="failure", headline="the next run")
    assert gh("comment", "--report", str(later), event=_run_event(fake, 6, head, prs=[1])).exit_code == 0
    [comment] = fake.bot_comments(1)
    assert "the next run" in comment["body"].lower() and fake.state.statuses[head][-1]["state"] == "failure"


def test_a_sticky_deleted_before_it_is_edited_is_posted_anew(fake, gh, tmp_path):
    head = fake.state.refs["heads/feature"]
    first = _report_file(tmp_path, "first", head_sha=head, headline="first")
    assert gh("comment", "--report", str(first), event=_run_event(fake, 5, head, prs=[1])).exit_code == 0
    [sticky] = [cid for cid, c in fake.state.comments.items() if c["issue"] == 1]
    fake.before(method="PATCH", path=rf"/issues/comments/{sticky}$", action=lambda f: f.state.comments.pop(sticky))
    second = _report_file(tmp_path, "second", head_sha=head, verdict="failure", headline="second")
    result = gh("comment", "--report", str(second), event=_run_event(fake, 6, head, prs=[1]))
    assert result.exit_code == 0, result.output
    [comment] = fake.bot_comments(1)
    assert comment["body"].startswith(COMMENT_MARKER) and "second" in comment["body"].lower()
    assert fake.state.statuses[head][-1]["state"] == "failure"


def test_a_sticky_post_slower_than_the_timeout_is_not_made_twice(fake, gh, config, tmp_path):
    config.write_text(config.read_text() + "github-timeout = 1\n", encoding="utf-8")
    head = fake.state.refs["heads/feature"]
    fake.inject("slow", method="POST", path=r"/issues/1/comments$", seconds=1.5)
    report = _report_file(tmp_path, "slow", head_sha=head)
    result = gh("comment", "--report", str(report), event=_run_event(fake, 5, head, prs=[1]))
    assert result.exit_code == 0, result.output
    time.sleep(1.0)  # long enough for the slow POST to have landed, whenever it does
    assert len(fake.bot_comments(1)) == 1 and fake.created_comments == 1


def test_a_cancelled_dispatched_run_answers_its_command(fake, gh, tmp_path):
    fake.state.comments[900] = {"issue": 1, "body": "/export-check", "user": WRITER, "created": P.STAMP}
    event = P.workflow_run_event(repo=fake.repo, run_id=8, head_sha="0" * 40, pr_numbers=[])
    event["workflow_run"].update(
        event="workflow_dispatch",
        conclusion="cancelled",
        display_title="export-conformance #1: /export-check rerun (comment 900)",
    )
    result = gh("comment", "--report", str(tmp_path / "none" / "report.json"), event=event)
    assert result.exit_code == 0, result.output
    [reply] = fake.bot_comments(1)
    assert "cancelled" in reply["body"] and fake.state.reactions[900] == ["confused"]


# --- baselines, history, obsolete-skip evidence ------------------------------------------------


def _sweeps(fake):
    """Main's own sweep, then a newer fork run on a branch it named `main` (both upload the artifact)."""
    main = fake.state.refs["heads/main"]
    fake.add_run(
        "export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-baseline": _baseline("ours", main)}
    )
    for event in ("pull_request", "push"):
        fake.add_run(
            "export-baseline.yml",
            head_sha="e" * 40,
            event=event,
            head_repo=FORK,
            artifacts={"export-baseline": _baseline("forged", "e" * 40)},
        )
    # A run of this repository started by a PR event, on a branch called main: not a sweep either.
    fake.add_run(
        "export-baseline.yml",
        head_sha="d" * 40,
        event="pull_request",
        artifacts={"export-baseline": _baseline("pr", "d" * 40)},
    )


def _baseline(tag, sha):
    report = make_report(head_sha=sha, headline=tag)
    report = json.loads(json.dumps(report.to_json()))
    report["run_url"] = "javascript:alert(1)" if tag != "ours" else report["run_url"]
    # A version-1 baseline: sweep JUnit, its one cell's message naming whose it is.
    xml = junit([Case("BertModel::test_onnx_export_static", status="failed", stage="export", message=tag)])
    return zipped({"baseline-1.xml": xml, "report.json": json.dumps(report)})


def test_a_fork_run_on_a_branch_named_main_is_never_the_baseline(fake, gh, tmp_path):
    _sweeps(fake)
    out = tmp_path / "base"
    assert gh("baseline", "--out", str(out)).exit_code == 0
    state = read_state(out / "baseline.json")
    measurements = [m for ms in state.cells.values() for m in ms]
    assert [(m.result.message, m.commit) for m in measurements] == [("ours", fake.state.refs["heads/main"])]


def test_a_fork_run_on_a_branch_named_main_is_never_a_night_of_history(fake, gh, tmp_path):
    _sweeps(fake)
    out = tmp_path / "history"
    assert gh("reports", "--count", "5", "--out", str(out), env={"GITHUB_RUN_ID": "0"}).exit_code == 0
    [night] = sorted(out.iterdir())
    assert json.loads((night / "report.json").read_text())["headline"] == "ours"


def test_a_fork_run_is_never_obsolete_skip_evidence(fake, tmp_path):
    from bot.publish.github_api import GitHubClient, RetryPolicy
    from bot.publish.obsolete_skips import history_json

    _sweeps(fake)
    client = GitHubClient(fake.full_name, fake.token, api_url=fake.url, policy=RetryPolicy(total=1, backoff=0.01))
    found = history_json(client, "export-baseline.yml", "export-baseline", branch="main", count=5, exclude_run=0)
    assert [data["headline"] for _, data in found] == ["ours"]


# --- sizes ----------------------------------------------------------------------------------------


def test_a_zip_bomb_member_is_refused_before_inflating(tmp_path):
    import io
    import zipfile

    from bot.publish.baseline import ArtifactError, Caps, extract, read_json_member

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("report.json", b" " * (20 << 20))
        archive.writestr("baseline-1.xml", b"<x/>")
    small = Caps(archive=1 << 20, inflated=1 << 20)
    with pytest.raises(ArtifactError, match="inflates past"):
        read_json_member(buffer.getvalue(), caps=small)
    with pytest.raises(ArtifactError, match="inflates past"):
        extract(buffer.getvalue(), tmp_path / "out", caps=small)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.*"))


def test_a_member_lying_about_its_size_is_stopped_while_reading(tmp_path):
    import io
    import zipfile

    from bot.publish.baseline import ArtifactError, Caps, read_json_member

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("report.json", b" " * (4 << 20))
    data = bytearray(buffer.getvalue())
    # Declare 10 bytes in both headers: the stream, not the header, must bound what is inflated.
    real = (4 << 20).to_bytes(4, "little")
    for at in [i for i in range(len(data) - 3) if data[i : i + 4] == real]:
        data[at : at + 4] = (10).to_bytes(4, "little")
    with pytest.raises(ArtifactError):
        read_json_member(bytes(data), caps=Caps(archive=1 << 20, inflated=1 << 20))


# --- bad input ------------------------------------------------------------------------------------


def test_a_malformed_api_url_is_one_line_and_exit_2(gh):
    result = gh("verify-sha", "--pr", "1", "--sha", "a" * 40, env={"GITHUB_API_URL": "ht!tp://[::1"})
    assert result.exit_code == 2 and "not an http(s) URL" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_a_missing_base_branch_for_the_obsolete_skip_pr_is_a_bot_error(fake):
    from bot.errors import BotError
    from bot.publish.github_api import GitHubClient, RetryPolicy
    from bot.publish.obsolete_skips import sync_pull_request

    client = GitHubClient(fake.full_name, fake.token, api_url=fake.url, policy=RetryPolicy(total=1, backoff=0.01))
    with pytest.raises(BotError, match="branch nope does not exist"):
        sync_pull_request(client, (), "body", base="nope")


HOSTILE_HEADLINES = (
    *PAYLOADS,
    "ok\u202e(desrever) \u200b\u2028next\u2029para\x1b[31mred\x00",
    "\ud800 a lone surrogate",  # json.loads accepts it; it cannot be sent as UTF-8
    " \n\t\r ",
    "é" * 200,
)


@pytest.mark.parametrize("headline", HOSTILE_HEADLINES, ids=range(len(HOSTILE_HEADLINES)))
def test_a_hostile_headline_becomes_one_bounded_line_of_status_text(headline):
    from bot.publish.comment import MAX_DESCRIPTION, status_description

    text = status_description("failure", headline)
    assert len(text) <= MAX_DESCRIPTION and text.startswith("failure")
    assert text == text.strip() and "  " not in text
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in text)
    text.encode("utf-8")  # would raise on a lone surrogate
    if not headline.strip():
        assert text == "failure"


def test_a_hostile_headline_reaches_the_status_as_plain_text(fake, gh, tmp_path):
    head = fake.state.refs["heads/feature"]
    headline = "line one\nline two\r\n\u202egnirts\x1b[0m " + "@victim " * 40
    report = _report_file(tmp_path, "hostile", head_sha=head, verdict="failure", headline=headline)
    assert gh("comment", "--report", str(report), event=_run_event(fake, 5, head, prs=[1])).exit_code == 0
    description = fake.state.statuses[head][-1]["description"]
    assert description.startswith("failure: line one line two gnirts [0m @victim @victim")
    assert len(description) == 140 and description.endswith("…") and "\n" not in description


def test_a_forks_pending_never_lands_on_the_victims_head(fake, gh):
    # The fork's run starts on the victim's head: a pending from it, with a run id newer than the
    # victim's, would hold back the victim's own verdict (an older run never replaces a newer status).
    head = _fork_pushes_the_victims_head(fake)
    fake.state.statuses[head] = []
    event = _run_event(fake, 6, head, branch="patch-1", head_repo=P.repository(FORK, 4242, fake.url))
    event["action"] = "requested"
    result = gh("pending", event=event)
    assert result.exit_code == 0, result.output
    assert fake.state.statuses[head] == [] and "a fork's run sets no status" in result.output


def test_the_status_never_links_where_the_report_says(fake, gh, tmp_path):
    # A direct run's event carries no run page: the status then has no link, not the report's.
    head = fake.state.refs["heads/feature"]
    fake.state.statuses[head] = []
    report = make_report(head_sha=head, verdict="success")
    path = tmp_path / "report.json"
    write_report(replace(report, run_url="https://evil.example/login"), path)
    event = P.pull_request_event("synchronize", repo=fake.repo, number=1, head_sha=head)
    assert gh("comment", "--report", str(path), "--pr", "1", event=event).exit_code == 0
    [status] = fake.state.statuses[head]
    assert status["state"] == "success" and status["target_url"] is None
