"""The tracking issue of main's regressions (docs/github.md): its body from the regressions, and what to do with it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.diff.groups import Group, group_failures
from bot.publish.github_api import Issue, PullRequest
from bot.report.markdown import cause_heading, cause_lines, code, cut, escape, link, n, short_sha, the_cells
from bot.results.baseline import Regression, chain, regressions
from bot.results.bisected import Unsettled, unsettled

MARKER = "<!-- export-bot:main-regressions -->"
# The newest run the state behind the body folded: an issue is never written from an older state.
_STATE = re.compile(r"<!-- export-bot:state (\d{1,20}) -->\s*$")
TITLE = "export-bot: regressions on main"
MAX_BODY = 65536  # GitHub's limit on an issue body
CAUSES = 40  # causes shown in full; the rest are counted
CELLS_PER_CAUSE = 30
EXCERPT = 300

_LOGIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?")  # GitHub's logins: nothing else is mentioned
_NO_FRAME = "No frame of the repository under test"
# The baseline's chain and regressions, for the job (bot/jobs/github_main.py), from this one import.
__all__ = [
    "Cause",
    "IssuePlan",
    "Origin",
    "causes_of",
    "chain",
    "closing_comment",
    "overtaken",
    "plan_issue",
    "regressions",
    "state_run",
    "unsettled",
]


@dataclass(frozen=True)
class Origin:
    """Where a culprit commit came from: its merged PR (None: pushed directly) and who wrote it."""

    pull: PullRequest | None
    author: str | None  # the PR's author, else the commit's GitHub account (None: none matches)

    @property
    def merged_by(self) -> str | None:
        return self.pull.merged_by if self.pull is not None else None


@dataclass(frozen=True)
class Cause:
    """One failure group (by stage and signature, as in the PR comment) narrowed to one culprit or commit range."""

    group: Group
    culprit: str | None  # the commit that broke the cells, when known
    good: str  # the last commit the cells passed at
    bad: str  # the first commit they failed at
    candidates: int  # commits between good (excluded) and bad (included)
    traced: bool = False  # grouped from full tracebacks (the run's report): "no frame" then means something
    doubt: Unsettled | None = None  # the bisect's re-runs disputed the break: flaky or not reproducible


def causes_of(
    found: Sequence[Regression], report_groups: Iterable[Group] = (), doubts: Mapping[str, Unsettled] | None = None
) -> tuple[Cause, ...]:
    """The regressions grouped by cause, each group split by culprit (or by the range still to bisect,
    or by what the bisect's re-runs disputed: `doubts`, by cell id).

    A group of this run's report (`report_groups`, grouped from full tracebacks, with culprit lines
    and hints) is used for the cells it holds; the others are grouped from their messages on main.
    """
    by_cell = {r.cell.id: r for r in found}
    given = [g for g in report_groups if any(c in by_cell for c in g.cells)]
    covered = {c for g in given for c in g.cells}
    groups = [*given, *group_failures(r.bad.result for r in found if r.cell.id not in covered)]
    out = []
    for index, group in enumerate(groups):
        split: dict[tuple, list[str]] = {}
        said: dict[tuple, Unsettled | None] = {}
        for cell_id in group.cells:
            r = by_cell.get(cell_id)
            if r is not None:
                doubt = (doubts or {}).get(cell_id)
                told = (doubt.kind, doubt.where, doubt.commit) if doubt else None  # the same words, one cause
                key = (r.culprit, r.good.commit, r.bad.commit, len(r.candidates), told)
                split.setdefault(key, []).append(cell_id)
                said.setdefault(key, doubt)
        for key, cells in split.items():
            culprit, good, bad, count, _ = key
            doubt = said[key]
            narrowed = Group(
                group.stage, group.signature, tuple(cells), group.excerpt, group.culprit, group.repro, group.hint
            )
            out.append(Cause(narrowed, culprit, good, bad, count, traced=index < len(given), doubt=doubt))
    out.sort(key=lambda c: (-len(c.group.cells), c.group.stage, c.group.signature, c.bad))
    return tuple(out)


def render_issue(
    causes: Sequence[Cause],
    culprits: Mapping[str, Origin],
    *,
    repository_url: str | None,
    newest: str | None,
    mentions: bool = False,
    state: int | None = None,
) -> str:
    """The issue's body: the marker, one line of what it is, then each cause with its culprit and cells;
    last, hidden, the newest run the state folded (`state`, see `overtaken`).

    The culprit's PR author and merger are named; `@`-mentioned (notified) only when `mentions`
    (the `mention-culprits` setting), so nobody is pinged unless the repository chooses it.
    """
    cells = sum(len(c.group.cells) for c in causes)
    out = [
        MARKER,
        f"{n(cells, 'cell')} {'fails' if cells == 1 else 'fail'} on main that passed before, "
        f"in {n(len(causes), 'cause')} (main@{short_sha(newest)}). export-bot updates this issue "
        "and closes it when every cell listed passes again or is skiplisted.",
    ]
    for index, cause in enumerate(causes[:CAUSES], 1):
        out += ["", cause_heading(index, cause.group), ""]
        out.append(_culprit_line(cause, culprits.get(cause.culprit or ""), repository_url, mentions))
        # The baseline keeps messages, not tracebacks: for its groups, no culprit line says nothing.
        out += [
            line for line in cause_lines(cause.group, EXCERPT, repository_url) if cause.traced or _NO_FRAME not in line
        ]
        listed = cause.group.cells[:CELLS_PER_CAUSE]
        out += ["", f"<details><summary>{the_cells(len(cause.group.cells))}</summary>", ""]
        out += [f"- {code(cut(cell, 200))}" for cell in listed]
        if len(listed) < len(cause.group.cells):
            out.append(f"- …and {n(len(cause.group.cells) - len(listed), 'more cell')}")
        out += ["", "</details>"]
    rest = causes[CAUSES:]
    if rest:
        out += ["", f"…and {n(len(rest), 'more cause')} ({n(sum(len(c.group.cells) for c in rest), 'cell')})."]
    body = "\n".join(out) + "\n"
    stamp = f"<!-- export-bot:state {state} -->\n" if state is not None else ""
    if len(body) + len(stamp) > MAX_BODY:
        body = body[: MAX_BODY - 40 - len(stamp)].rsplit("\n", 1)[0] + "\n\n…(cut to GitHub's limit)\n"
    return body + stamp


def state_run(baseline) -> int:
    """The newest run a state holds anything of: run ids grow, so a state that folded a later run is newer."""
    measured = (m.run_id for ms in baseline.cells.values() for m in ms)
    return max((*baseline.runs, *(s.run_id for s in baseline.segments if s.run_id), *measured), default=0) or 0


def overtaken(current_body: str, ours: int) -> int | None:
    """The newer state's run when the issue as it is now was written from a state newer than ours (`ours`,
    `state_run`): a job that ran alongside a newer one, or was displaced by it, then writes nothing."""
    found = _STATE.search(current_body or "")
    theirs = int(found[1]) if found else 0
    return theirs if theirs > ours else None


def _commit(sha: str, repository_url: str | None) -> str:
    url = f"{repository_url.rstrip('/')}/commit/{sha}" if repository_url else None
    return link(short_sha(sha), url, repository_url)


def _culprit_line(cause: Cause, culprit: Origin | None, repository_url: str | None, mentions: bool) -> str:
    if cause.doubt is not None:
        doubt = cause.doubt
        return (
            f"- 🔎 No culprit: {doubt.kind}. The {doubt.where} {_commit(doubt.commit, repository_url)} "
            f"{doubt.verb} when the bisect re-ran it, so the break between {_commit(cause.good, repository_url)} "
            f"(last pass) and {_commit(cause.bad, repository_url)} (first failure) is not confirmed."
        )
    if cause.culprit is None and not cause.candidates:
        return (
            f"- 🔎 Culprit unknown: {_commit(cause.good, repository_url)} (last pass) and "
            f"{_commit(cause.bad, repository_url)} (first failure) are not both on main's recorded history "
            "(a force-push, or a gap), so there is nothing to bisect."
        )
    if cause.culprit is None:
        return (
            f"- 🔎 Culprit unknown: bisect pending between {_commit(cause.good, repository_url)} (last pass) and "
            f"{_commit(cause.bad, repository_url)} (first failure) ({n(cause.candidates, 'commit')})."
        )
    text = f"- 🔎 Culprit: {_commit(cause.culprit, repository_url)}"
    pull = culprit.pull if culprit is not None else None
    if pull is not None:
        url = f"{repository_url.rstrip('/')}/pull/{pull.number}" if repository_url else None
        text += f", from {link(f'#{pull.number}', url, repository_url)} {escape(cut(pull.title, 200))}"
    if culprit is not None:
        people = [f"by {_person(culprit.author, mentions)}"] if culprit.author else []
        people += [f"merged by {_person(culprit.merged_by, mentions)}"] if culprit.merged_by else []
        text += f" ({', '.join(people)})" if people else ""
    return text + "."


def _person(login: str, mentions: bool) -> str:
    """`@login` notifies the user; without the `@` the name is said and nobody is pinged."""
    return f"@{login}" if mentions and _LOGIN.fullmatch(login) else escape(login)


def closing_comment(newest: str | None) -> str:
    return f"Every cell this issue listed passes again on main or is skiplisted (main@{short_sha(newest)}): closing."


@dataclass(frozen=True)
class IssuePlan:
    """What to do: `create`, `edit` (the body), `close`, or `none`; duplicates are closed either way."""

    action: str
    number: int | None = None
    duplicates: tuple[int, ...] = ()


def tracking_issues(issues: Iterable[Issue], bot_login: str) -> list[Issue]:
    """The bot's own open tracking issues, oldest first: an issue anyone else wrote with the marker is not one."""
    own = [i for i in issues if not i.is_pull and i.user == bot_login and i.body.lstrip().startswith(MARKER)]
    return sorted(own, key=lambda i: i.number)


def plan_issue(own: Sequence[Issue], body: str | None) -> IssuePlan:
    """`body` None: no regression is left, so an open issue is closed; else the oldest open one is kept and
    edited when its body differs, or a new one is opened."""
    if not own:
        return IssuePlan("none" if body is None else "create")
    keep, *rest = own
    duplicates = tuple(i.number for i in rest)
    if body is None:
        return IssuePlan("close", keep.number, duplicates)
    changed = keep.body.rstrip() != body.rstrip()
    return IssuePlan("edit" if changed else "none", keep.number, duplicates)
