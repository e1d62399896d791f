"""`export-bot github track`: the one tracking issue of main's regressions, its culprits' authors and mergers, against the fake GitHub."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace

import pytest

from bot.cells import Cell
from bot.outcomes import CellResult, Status
from bot.publish.tracking import MARKER
from bot.results.baseline import Baseline, Measurement, Segment
from bot.results.baseline_json import dumps
from tests.conftest import SKIPLISTS
from tests.github.conftest import outputs
from tests.github.routes import add_issue, associate

SHAS = [f"{i:x}" * 40 for i in range(1, 10)]
BERT = [Cell("BertModel", "dynamo", shape) for shape in ("static", "dynamic")]
GPT = Cell("GPT2Model", "onnx")
BROKEN = "torch._dynamo.exc.UserError: Could not guard on data-dependent expression u0 > 1"


def result(cell: Cell, ok: bool, message: str = BROKEN) -> CellResult:
    if ok:
        return CellResult(cell, Status.PASSED)
    return CellResult(cell, Status.FAILED, stage="export", message=message)


def state(history: dict[Cell, list[tuple[str, bool, str]]], *, pushes: int = 6, message: str = BROKEN) -> Baseline:
    """Main as pushes of one commit each (SHAS[0..pushes-1], push i ran as run i+1); per cell its
    measurements, newest first, as (commit, passed, source)."""
    segments = tuple(Segment(SHAS[i - 1] if i else None, (SHAS[i],), i + 1) for i in range(pushes))
    cells = {
        cell: tuple(
            Measurement(
                sha, f"2026-12-01T0{SHAS.index(sha)}:00:00Z", _run(sha, source), source, result(cell, ok, message)
            )
            for sha, ok, source in found
        )
        for cell, found in history.items()
    }
    return Baseline(segments=segments, cells=cells)


def _run(sha: str, source: str) -> int:
    return SHAS.index(sha) + 1 if source == "push" else 100 + SHAS.index(sha)


@pytest.fixture
def track(gh, tmp_path, fake):
    skiplists = tmp_path / "skiplists"
    shutil.copytree(SKIPLISTS, skiplists)

    def run(baseline: Baseline, *extra: str):
        path = tmp_path / "baseline.json"
        path.write_text(dumps(baseline), encoding="utf-8")
        gh.output.write_text("", encoding="utf-8")
        got = gh("track", "--state", str(path), "--skiplists", str(skiplists), *extra)
        return got, outputs(gh.output)

    run.skiplists = skiplists
    return run


def tracking(fake) -> dict[int, dict]:
    return {n: i for n, i in fake.state.issues.items() if not i.get("pull") and i["body"].startswith(MARKER)}


def patches(fake) -> list[str]:
    return [path for method, path in fake.requests if method == "PATCH"]


BERT_BROKEN_BY_PUSH = {cell: [(SHAS[2], False, "push"), (SHAS[1], True, "push")] for cell in BERT}


def test_a_push_that_breaks_bert_opens_one_issue_naming_its_commit_and_pr(fake, track):
    fake.open_pull(5, "feature", title="Bert: a data-dependent branch")
    fake.close_pull(5, merged=True)
    associate(fake, SHAS[2], 5)
    got, out = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    [(number, issue)] = tracking(fake).items()
    assert out == {"issue": str(number), "regressions": "2", "bisect": "false"}
    assert issue["user"] == "github-actions[bot]" and issue["state"] == "open"
    body = issue["body"]
    assert f"[`{SHAS[2][:12]}`](https://github.com/Codertocat/Hello-World/commit/{SHAS[2]})" in body
    assert "[#5](https://github.com/Codertocat/Hello-World/pull/5) Bert: a data-dependent branch" in body
    assert "`BertModel::test_torch_export_static`" in body and "2 cells" in body

    again, out = track(state(BERT_BROKEN_BY_PUSH))
    assert again.exit_code == 0 and out["issue"] == str(number)
    assert patches(fake) == [] and len(tracking(fake)) == 1  # unchanged: no edit, no second issue


def test_an_open_fork_pr_holding_the_culprit_commit_is_never_named(fake, track):
    """The culprit was pushed to main directly; a fork opens a PR holding it, to be named as its PR."""
    fake.open_pull(9, "main", fork="attacker/Hello-World", head_sha=SHAS[2], title="@maintainers blame someone else")
    associate(fake, SHAS[2], 9)
    got, _ = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    [issue] = tracking(fake).values()
    assert f"Culprit: [`{SHAS[2][:12]}`](https://github.com/Codertocat/Hello-World/commit/{SHAS[2]})." in issue["body"]
    assert "#9" not in issue["body"] and "blame" not in issue["body"]


def test_a_sweep_finding_a_break_says_the_bisect_is_pending_and_the_issue_is_edited_in_place(fake, track):
    got, _ = track(state(BERT_BROKEN_BY_PUSH))
    [number] = tracking(fake)
    history = dict(BERT_BROKEN_BY_PUSH)
    history[GPT] = [(SHAS[5], False, "sweep"), (SHAS[1], True, "sweep")]
    got, out = track(state(history, message=BROKEN))
    assert got.exit_code == 0, got.output
    assert out == {"issue": str(number), "regressions": "3", "bisect": "true"}
    assert list(tracking(fake)) == [number] and patches(fake) == [f"/repos/Codertocat/Hello-World/issues/{number}"]
    body = tracking(fake)[number]["body"]
    assert f"bisect pending between [`{SHAS[1][:12]}`]" in body and "(4 commits)" in body
    # The Bert cells name no PR: GitHub associates none with that commit.
    assert f"Culprit: [`{SHAS[2][:12]}`](https://github.com/Codertocat/Hello-World/commit/{SHAS[2]})." in body


def test_the_issue_closes_when_the_cells_pass_again_and_a_new_one_opens_for_new_breaks(fake, track):
    track(state(BERT_BROKEN_BY_PUSH))
    [first] = tracking(fake)
    fixed = {cell: [(SHAS[3], True, "push"), *found] for cell, found in BERT_BROKEN_BY_PUSH.items()}
    got, out = track(state(fixed))
    assert got.exit_code == 0, got.output
    assert out == {"issue": "", "regressions": "0", "bisect": "false"}
    assert fake.state.issues[first]["state"] == "closed" and fake.state.issues[first]["state_reason"] == "completed"
    [closing] = [c["body"] for c in fake.state.comments.values() if c["issue"] == first]
    assert "passes again on main or is skiplisted" in closing
    track(state(fixed))
    assert len(fake.state.comments) == 1  # closed once, not again

    broken_again = {GPT: [(SHAS[4], False, "push"), (SHAS[3], True, "push")]}
    got, out = track(state(broken_again))
    [second] = [n for n, i in tracking(fake).items() if i["state"] == "open"]
    assert second != first and out["issue"] == str(second)


def test_a_skiplisted_cell_is_no_regression(fake, track):
    track(state(BERT_BROKEN_BY_PUSH))
    [number] = tracking(fake)
    skips = track.skiplists / "export_skips.toml"
    skips.write_text(skips.read_text(encoding="utf-8").replace("[all]\n", '[all]\nBertModel = "Broken on main."\n', 1))
    got, out = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    assert out["regressions"] == "0" and fake.state.issues[number]["state"] == "closed"


def test_an_issue_another_user_wrote_with_the_marker_is_never_adopted(fake, track):
    forged = add_issue(fake, "export-bot: regressions on main", f"{MARKER}\nnothing broken, close me", user="mallory")
    fake.open_pull(9, "feature")
    fake.state.pulls[9]["body"] = MARKER  # a PR by the bot's name would be listed among issues too
    got, out = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    assert out["issue"] not in (str(forged), "9", "")
    assert fake.state.issues[forged]["body"].endswith("close me") and fake.state.issues[forged]["state"] == "open"
    fixed = {cell: [(SHAS[3], True, "push"), *found] for cell, found in BERT_BROKEN_BY_PUSH.items()}
    track(state(fixed))
    assert fake.state.issues[forged]["state"] == "open"  # not closed either: not the bot's


def test_the_own_issue_is_found_past_the_first_page_and_duplicates_are_closed(fake, track):
    for i in range(35):
        add_issue(fake, f"unrelated {i}", "text")
    track(state(BERT_BROKEN_BY_PUSH))
    [number] = tracking(fake)
    duplicate = add_issue(fake, "export-bot: regressions on main", fake.state.issues[number]["body"])
    got, out = track(state({GPT: [(SHAS[4], False, "push"), (SHAS[3], True, "push")]}))
    assert got.exit_code == 0, got.output
    assert out["issue"] == str(number) and fake.state.issues[duplicate]["state"] == "closed"
    assert fake.state.issues[duplicate]["state_reason"] == "not_planned"
    assert "GPT2Model" in fake.state.issues[number]["body"]


def test_a_lost_answer_to_the_creation_does_not_open_two_issues(fake, track):
    fake.inject("status", method="POST", path=r"/issues$", status=502, after=True)
    got, _ = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    assert len(tracking(fake)) == 1


def test_hostile_messages_are_inert_in_the_issue(fake, track):
    hostile = "Error: @octocat <!-- export-bot:main-regressions --> [x](https://evil.example) #1"
    got, _ = track(state(BERT_BROKEN_BY_PUSH, message=hostile))
    assert got.exit_code == 0, got.output
    [issue] = tracking(fake).values()
    # Only the bot's own marker and state stamp: a reader finds no other.
    assert re.findall(r"<!--[^>]*-->", issue["body"]) == [MARKER, "<!-- export-bot:state 6 -->"]
    prose = re.sub(r"`[^`]*`", "", issue["body"])  # code spans show text as it is
    assert "@octocat" not in prose and "](https://evil" not in prose and "#1" not in prose


def test_a_malformed_state_is_one_line_exit_2(fake, track, tmp_path, gh):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "export-bot-baseline", "version": 9}', encoding="utf-8")
    got = gh("track", "--state", str(bad), "--skiplists", str(track.skiplists))
    assert got.exit_code == 2 and "bad.json" in got.output and "Traceback" not in got.output
    assert fake.state.issues.keys() == {1}  # only the fixture's PR: nothing was written


def test_the_runs_report_brings_its_culprit_line_and_hint(fake, track, tmp_path):
    from dataclasses import replace

    from bot.diff.groups import Culprit, Group
    from bot.diff.hints import hint_for
    from bot.diff.model import write_report
    from tests.github.conftest import make_report

    line = Culprit("src/transformers/models/bert/modeling_bert.py", 40, "if int(x.max()) < 0:", url=None)
    signature = "UserError: Could not guard on data-dependent expression <class>"
    group = Group(
        "export", signature, tuple(c.id for c in BERT), "UserError: …", line, "", hint_for("export", signature)
    )
    report = replace(make_report(head_sha=SHAS[2], verdict="failure"), groups=(group,))
    write_report(report, tmp_path / "report.json")
    got, _ = track(state(BERT_BROKEN_BY_PUSH), "--report", str(tmp_path / "report.json"))
    assert got.exit_code == 0, got.output
    [issue] = tracking(fake).values()
    assert "`src/transformers/models/bert/modeling_bert.py:40`: `if int(x.max()) < 0:`" in issue["body"]


# --- who wrote and merged the culprit; breaks the bisect's re-runs disputed ---------------------------

LINE = re.compile(r"^- 🔎 .*$", re.M)


@pytest.fixture
def merged_culprit(fake):
    """PR #5, opened by Codertocat and merged by octo-maintainer, brought SHAS[2] (the push that broke BERT)."""
    fake.open_pull(5, "feature", title="Bert: a data-dependent branch", user="Codertocat")
    fake.close_pull(5, merged=True, merged_by="octo-maintainer")
    associate(fake, SHAS[2], 5)


def test_the_culprit_line_names_its_author_and_merger_without_pinging_them(fake, track, merged_culprit):
    got, _ = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    [issue] = tracking(fake).values()
    [line] = LINE.findall(issue["body"])
    assert line.endswith("Bert: a data-dependent branch (by Codertocat, merged by octo-maintainer).")
    assert "@" not in line
    assert ("GET", "/repos/Codertocat/Hello-World/pulls/5") in fake.requests  # merged_by: the single-PR answer


def test_with_mention_culprits_set_the_author_and_merger_are_mentioned(fake, track, merged_culprit, config):
    config.write_text(config.read_text(encoding="utf-8") + "mention-culprits = true\n", encoding="utf-8")
    got, _ = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    [issue] = tracking(fake).values()
    [line] = LINE.findall(issue["body"])
    assert line.endswith("(by @Codertocat, merged by @octo-maintainer).")


def test_a_culprit_pushed_without_a_pr_names_its_commit_author(fake, track):
    fake.state.commit_authors[SHAS[2]] = "mona"  # GitHub matched the commit's email to an account
    got, _ = track(state(BERT_BROKEN_BY_PUSH))
    assert got.exit_code == 0, got.output
    [issue] = tracking(fake).values()
    [line] = LINE.findall(issue["body"])
    assert line.endswith(f"/commit/{SHAS[2]}) (by mona).") and "merged by" not in line


def disputed(where: int, ok: bool) -> Baseline:
    """A sweep found BERT broken between SHAS[1] and SHAS[5]; the bisect re-ran commit SHAS[where] and got `ok`."""
    found = {cell: [(SHAS[5], False, "sweep"), (SHAS[1], True, "sweep")] for cell in BERT}
    base = state(found)
    cells = {}
    for cell, ms in base.cells.items():
        flip = Measurement(SHAS[where], "2026-12-02T00:00:00Z", 77, "bisect", result(cell, ok), flipped=True)
        cells[cell] = tuple(sorted((*ms, flip), key=lambda m: SHAS.index(m.commit), reverse=True))
    return replace(base, cells=cells)


@pytest.mark.parametrize(
    ("where", "ok", "said"),
    [
        (1, False, "No culprit: flaky. The last pass [`{sha}`]({url}/commit/{full}) failed when the bisect re-ran it"),
        (5, True, "No culprit: not reproducible. The first failure [`{sha}`]({url}/commit/{full}) passed when"),
        (3, True, "No culprit: flaky. The candidate [`{sha}`]({url}/commit/{full}) gave another result when"),
    ],
)
def test_a_break_the_re_runs_disputed_is_reported_as_such_and_not_bisected_again(fake, track, where, ok, said):
    got, out = track(disputed(where, ok))
    assert got.exit_code == 0, got.output
    assert out["bisect"] == "false" and out["regressions"] == "2"
    [issue] = tracking(fake).values()
    lines = LINE.findall(issue["body"])
    assert len(lines) == 1, issue["body"]  # both cells: one cause
    [line] = lines
    url = "https://github.com/Codertocat/Hello-World"
    assert said.format(sha=SHAS[where][:12], url=url, full=SHAS[where]) in line
    assert "is not confirmed" in line and "Culprit:" not in line
