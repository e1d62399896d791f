"""Main's state changes are compare-and-swap: a second writer (a displaced run, or a hostile one that joined
the same concurrency group) acting between a job's read and its write keeps its update, and the job ends
saying it was superseded (docs/github.md, "Main's state"): the obsolete-skip branch, the tracking issue."""

from __future__ import annotations

from bot.publish.tracking import MARKER
from tests.github.test_obsolete_skips import BRANCH, GDINO, _night
from tests.github.test_track import BERT_BROKEN_BY_PUSH, GPT, SHAS, patches, state, track, tracking  # noqa: F401

NEWER = 10**9  # a sweep after every run of the test


def _second_writer(fake, name: str, sweep: int):
    """Another job (a displaced run, a hostile one in the same concurrency group) puts its own commit on
    the branch, resting on sweep `sweep` (its trailer)."""

    def act(fake) -> None:
        main = fake.state.refs["heads/main"]
        message = f"{name}\n\nExport-bot-sweep: {sweep}"
        fake.state.refs[f"heads/{BRANCH}"] = fake.commit({"skiplists/x.toml": name}, (main,), message)

    return act


def _tip(fake) -> str:
    return fake.state.commits[fake.state.refs[f"heads/{BRANCH}"]]["message"]


def test_a_newer_writer_that_moves_the_branch_before_the_update_keeps_it_and_this_job_says_superseded(fake, gh):
    for _ in range(3):
        _night(fake, gh, [GDINO])
    [pull] = [p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]
    before = dict(pull)
    # Between the job's read of the branch and its write: while it makes its commit.
    fake.before(method="POST", path=r"/git/commits$", action=_second_writer(fake, "newer", NEWER))
    _, result = _night(fake, gh, [GDINO])
    assert result.exit_code == 0, result.output
    assert "superseded" in result.output and f"sweep {NEWER}" in result.output, result.output
    assert _tip(fake).startswith("newer")  # the other writer's update stands
    assert {k: pull[k] for k in ("title", "body", "state")} == {k: before[k] for k in ("title", "body", "state")}


def test_an_older_writer_that_moves_the_branch_before_the_update_is_replaced_from_where_it_put_it(fake, gh):
    for _ in range(3):
        _night(fake, gh, [GDINO])
    fake.before(method="POST", path=r"/git/commits$", action=_second_writer(fake, "older", 1))
    run_id, result = _night(fake, gh, [GDINO])
    assert result.exit_code == 0 and "superseded" not in result.output, result.output
    assert _tip(fake).endswith(f"Export-bot-sweep: {run_id}")  # this night's edits, the newest
    [pull] = [p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]
    assert f"<!-- export-bot:sweep {run_id} -->" in pull["body"]


def test_a_writer_that_creates_the_branch_first_keeps_it_and_no_pull_request_is_opened(fake, gh):
    for _ in range(2):
        _night(fake, gh, [GDINO])
    # The narrowest window: after the job's last look, as its creation reaches GitHub, which refuses a
    # ref that exists; the job then finds another commit there.
    fake.before(method="POST", path=r"/git/refs$", action=_second_writer(fake, "first", NEWER))
    _, result = _night(fake, gh, [GDINO])  # the third night would open the PR
    assert result.exit_code == 0, result.output
    assert "superseded" in result.output and f"sweep {NEWER}" in result.output, result.output
    assert _tip(fake).startswith("first")
    assert not [p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]


def test_without_a_second_writer_the_branch_moves_from_where_it_was_read(fake, gh):
    for _ in range(3):
        _night(fake, gh, [GDINO])
    first = fake.state.refs[f"heads/{BRANCH}"]
    fake.state.refs["heads/main"] = fake.commit({"README.md": "moved on\n"}, (fake.state.refs["heads/main"],), "m")
    _, result = _night(fake, gh, [GDINO])
    assert result.exit_code == 0 and "superseded" not in result.output, result.output
    assert fake.state.refs[f"heads/{BRANCH}"] != first


# --- the tracking issue: written only from a state at least as new as the one that wrote it last ----------


def test_an_older_state_never_overwrites_the_tracking_issue_a_newer_one_wrote(fake, track):  # noqa: F811
    newer = {**BERT_BROKEN_BY_PUSH, GPT: [(SHAS[7], False, "push"), (SHAS[6], True, "push")]}
    got, out = track(state(newer, pushes=8))
    assert got.exit_code == 0, got.output
    [(number, issue)] = tracking(fake).items()
    written = issue["body"]
    # A displaced job of an earlier push (its state's newest run is 6, the issue's 8) ends after it.
    got, out = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    assert "superseded" in got.output and "run 8" in got.output, got.output
    assert tracking(fake)[number]["body"] == written and patches(fake) == []


def test_a_newer_writer_between_the_read_and_the_write_keeps_its_update(fake, track):  # noqa: F811
    track(state(BERT_BROKEN_BY_PUSH, pushes=3))
    [number] = tracking(fake)
    theirs = f"{MARKER}\nthe newer job's list\n<!-- export-bot:state 8 -->\n"

    def newer_job(fake) -> None:  # a job with a newer state edits the issue after this one listed it
        fake.state.issues[number]["body"] = theirs

    fake.before(method="GET", path=rf"/issues/{number}$", action=newer_job)
    fixed = {cell: [(SHAS[3], True, "push"), *found] for cell, found in BERT_BROKEN_BY_PUSH.items()}
    got, out = track(state(fixed, pushes=4))  # would close it
    assert got.exit_code == 0, got.output
    assert "superseded" in got.output, got.output
    assert fake.state.issues[number]["body"] == theirs and fake.state.issues[number]["state"] == "open"
    assert not [c for c in fake.state.comments.values() if c["issue"] == number]


def test_a_newer_state_edits_the_issue_an_older_one_wrote(fake, track):  # noqa: F811
    track(state(BERT_BROKEN_BY_PUSH))
    [number] = tracking(fake)
    newer = {**BERT_BROKEN_BY_PUSH, GPT: [(SHAS[7], False, "push"), (SHAS[6], True, "push")]}
    got, _ = track(state(newer, pushes=8))
    assert got.exit_code == 0 and "superseded" not in got.output, got.output
    assert "GPT2Model" in tracking(fake)[number]["body"] and tracking(fake)[number]["body"].endswith("state 8 -->\n")


def test_a_job_of_an_older_sweep_than_the_open_pull_request_s_changes_nothing(fake, gh):
    for _ in range(3):
        _night(fake, gh, [GDINO])
    [pull] = [p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]
    pull["body"] = pull["body"].replace("<!-- export-bot:sweep ", f"<!-- export-bot:sweep {NEWER}0")  # a later sweep's
    tip, body = fake.state.refs[f"heads/{BRANCH}"], pull["body"]
    _, result = _night(fake, gh, [GDINO])  # a displaced job of an earlier night, ending last
    assert result.exit_code == 0, result.output
    assert "superseded" in result.output, result.output
    assert fake.state.refs[f"heads/{BRANCH}"] == tip and pull["body"] == body


# --- the dashboard: a sweep older than one that already has its report deploys nothing over it ----------


def test_a_sweep_overtaken_by_a_newer_one_builds_its_history_from_earlier_nights_and_says_superseded(
    fake, gh, tmp_path
):
    from tests.github.conftest import make_report, outputs, report_zip

    main = fake.state.refs["heads/main"]

    def sweep(sha: str) -> int:
        report = report_zip(make_report(head_sha=sha))
        return fake.add_run("export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-sweep": report})

    sweep("1" * 40)
    this_run = sweep("2" * 40)
    next_night = sweep("3" * 40)  # the next night's sweep, which ended first
    out = tmp_path / "history"
    args = ("reports", "--artifact", "export-sweep", "--count", "5", "--out", str(out))
    result = gh(*args, env={"GITHUB_RUN_ID": str(this_run)})
    assert result.exit_code == 0, result.output
    assert "superseded: sweep run" in result.output and outputs(gh.output)["superseded"] == "true"
    history = [p.read_text(encoding="utf-8") for p in sorted(out.glob("*/report.json"))]
    assert len(history) == 1 and "1" * 40 in history[0]  # the earlier night only, never the newer one

    gh.output.write_text("", encoding="utf-8")
    newest = gh(*args, "--out", str(tmp_path / "newest"), env={"GITHUB_RUN_ID": str(next_night)})
    assert newest.exit_code == 0 and outputs(gh.output)["superseded"] == "false", newest.output
