"""The tracking issue's pure parts: causes by group and culprit, its body, and what to do with the open issue."""

from __future__ import annotations

import pytest

from bot.cells import Cell
from bot.diff.groups import Culprit, Group
from bot.outcomes import CellResult, Status
from bot.publish.github_api import Issue, PullRequest
from bot.publish.tracking import (
    MARKER,
    MAX_BODY,
    IssuePlan,
    Origin,
    causes_of,
    plan_issue,
    render_issue,
    tracking_issues,
)
from bot.results.baseline import Measurement, Regression

G, B1, B2, B3 = (f"{c}" * 40 for c in "abcd")
REPO = "https://github.com/o/r"
MESSAGE = "torch._dynamo.exc.UserError: Could not guard on data-dependent expression u0 > 1"


def regression(model: str, bad: str, culprit: str | None, candidates=(B1, B2), message: str = MESSAGE) -> Regression:
    cell = Cell(model, "dynamo")

    def at(sha: str, status: Status) -> Measurement:
        return Measurement(sha, "t", 1, "sweep", CellResult(cell, status, "export", message=message))

    return Regression(cell, at(G, Status.PASSED), at(bad, Status.FAILED), culprit, tuple(candidates))


def test_one_cause_is_split_by_culprit_and_ranges_apart():
    found = [
        regression("BertModel", B2, B2),
        regression("RobertaModel", B2, B2),
        regression("GPT2Model", B3, None, (B1, B2, B3)),
    ]
    causes = causes_of(found)
    assert [(c.group.cells, c.culprit, c.candidates) for c in causes] == [
        (("BertModel::test_torch_export_static", "RobertaModel::test_torch_export_static"), B2, 2),
        (("GPT2Model::test_torch_export_static",), None, 3),
    ]
    assert causes[0].group.signature == causes[1].group.signature and not causes[0].traced


def test_a_group_of_the_runs_report_describes_its_cells():
    found = [regression("BertModel", B2, B2), regression("GPT2Model", B2, B2, message="ValueError: other")]
    line = Culprit(
        "src/transformers/models/bert/modeling_bert.py", 12, "if x.max() > 0:", url=f"{REPO}/blob/{B2}/x#L12"
    )
    report = Group("export", "report's signature", ("BertModel::test_torch_export_static", "T5Model::x"), culprit=line)
    causes = causes_of(found, [report])
    assert [(c.group.signature, c.group.cells, c.traced) for c in causes] == [
        ("ValueError: other", ("GPT2Model::test_torch_export_static",), False),
        ("report's signature", ("BertModel::test_torch_export_static",), True),
    ]
    body = render_issue(causes, {}, repository_url=REPO, newest=B2)
    assert "modeling_bert.py:12" in body and body.count("No frame") == 0  # the state's group says nothing of frames


def test_the_body_names_the_culprit_its_pr_or_the_bisect_left():
    causes = causes_of([regression("BertModel", B2, B2), regression("GPT2Model", B3, None, (B1, B2, B3))])
    pull = PullRequest(5, "closed", B2, "f", "o/r", "o/r", "main", title="Bert: `x` <b>", merged=True)
    body = render_issue(causes, {B2: Origin(pull, None)}, repository_url=REPO, newest=B3)
    assert body.startswith(MARKER + "\n2 cells fail on main that passed before, in 2 causes (main@`dddddddddddd`)")
    assert f"Culprit: [`{B2[:12]}`]({REPO}/commit/{B2}), from [#5]({REPO}/pull/5) Bert: \\`x\\` &lt;b&gt;." in body
    assert f"bisect pending between [`{G[:12]}`]({REPO}/commit/{G}) (last pass) and [`{B3[:12]}`]" in body
    assert "(3 commits)" in body
    gap = render_issue(causes_of([regression("T5Model", B3, None, ())]), {}, repository_url=None, newest=B3)
    assert "are not both on main's recorded history" in gap and "bisect pending" not in gap
    unlinked = render_issue(causes, {B2: Origin(pull, None)}, repository_url=None, newest=B3)
    assert "/commit/" not in unlinked and "/pull/" not in unlinked and "#5" in unlinked


@pytest.mark.parametrize("mentions", [False, True])
def test_a_culprit_pushed_directly_names_its_commit_author_and_a_login_is_mentioned_only_if_asked(mentions):
    causes = causes_of([regression("BertModel", B2, B2)])
    body = render_issue(causes, {B2: Origin(None, "mona")}, repository_url=REPO, newest=B2, mentions=mentions)
    assert f"Culprit: [`{B2[:12]}`]({REPO}/commit/{B2}) (by {'@' if mentions else ''}mona)." in body
    odd = render_issue(causes, {B2: Origin(None, "x @everyone")}, repository_url=REPO, newest=B2, mentions=mentions)
    assert "@everyone" not in odd  # not a GitHub login: never a mention, whatever the setting


def test_a_huge_list_stays_within_githubs_limit():
    found = [regression(f"Model{i}", B2, B2, message=f"Error{i}: {'x' * 2000}") for i in range(300)]
    found += [regression("BigModel", B2, B2)] * 1  # one cause of one cell among many
    body = render_issue(causes_of(found), {}, repository_url=REPO, newest=B2)
    assert len(body) <= MAX_BODY and "more cause" in body and body.startswith(MARKER)


def issue(number: int, body: str = MARKER + "\nold", user: str = "bot", pull: bool = False) -> Issue:
    return Issue(number, "t", body, "open", user, pull)


def test_only_the_bots_own_marked_issues_count():
    found = [issue(3, user="mallory"), issue(4, body="no marker"), issue(5, pull=True), issue(7), issue(6)]
    assert [i.number for i in tracking_issues(found, "bot")] == [6, 7]


@pytest.mark.parametrize(
    ("own", "body", "plan"),
    [
        ([], None, IssuePlan("none")),
        ([], "new", IssuePlan("create")),
        ([issue(6)], None, IssuePlan("close", 6)),
        ([issue(6), issue(9)], None, IssuePlan("close", 6, (9,))),
        ([issue(6)], MARKER + "\nold\n", IssuePlan("none", 6)),
        ([issue(6), issue(9)], "changed", IssuePlan("edit", 6, (9,))),
    ],
)
def test_the_plan(own, body, plan):
    assert plan_issue(own, body) == plan
