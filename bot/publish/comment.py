"""The sticky PR comment and the `export-conformance` status: one bot comment per PR, edited in place.

The same comment as bot/report/comment.py, seen from the publish stage: that module writes its
text, this one posts and edits it.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass

from bot.publish.github_api import Comment, GitHubClient, GitHubError

log = logging.getLogger(__name__)

MAX_COMMENT = 65536  # GitHub's limit on a comment body
# Only the stamp the bot writes last counts: a report's text that holds the same marker earlier in the
# body (a headline, a cell name) must not be read as the run id and freeze the comment.
_RUN = re.compile(r"\n<!-- export-bot:run (\d+) -->\s*\Z")
DEFAULT_BOT_LOGIN = "github-actions[bot]"


def stamp(body: str, run_id: int) -> str:
    """The body with a hidden run id: a slow, older run must not overwrite a newer run's comment."""
    return f"{body.rstrip()}\n\n<!-- export-bot:run {run_id} -->\n"


def stamp_length(run_id: int) -> int:
    return len(stamp("", run_id))


def run_of(body: str) -> int:
    """The run id of the trailing stamp `stamp` wrote, 0 when the body does not end with one."""
    match = _RUN.search(body)
    return int(match.group(1)) if match else 0


def stickies(comments: list[Comment], marker: str, bot_login: str) -> list[Comment]:
    """The bot's own marked comments, oldest first (a user quoting the marker does not count)."""
    own = [c for c in comments if c.user == bot_login and c.body.lstrip().startswith(marker)]
    return sorted(own, key=lambda c: c.id)


@dataclass(frozen=True)
class StickyPlan:
    keep: Comment | None
    delete: tuple[Comment, ...]
    edit: bool  # rewrite `keep` with our body


def plan_sticky(found: list[Comment], body: str, run_id: int, *, overtaken: bool = False) -> StickyPlan:
    """Keep the oldest sticky comment, delete the rest, and write ours unless a newer run already did
    (`overtaken`: the newer run ended before this one ran, and this one holds the status: it is ours)."""
    if not found:
        return StickyPlan(None, (), False)
    keep, *rest = found
    return StickyPlan(keep, tuple(rest), keep.body != body and (overtaken or run_of(keep.body) <= run_id))


@dataclass(frozen=True)
class Sticky:
    """The one sticky comment after an upsert, and whether it holds this run's report or a newer run's."""

    id: int
    holds_run: int
    ours: bool


def upsert_sticky(
    client: GitHubClient,
    number: int,
    body: str,
    *,
    marker: str,
    run_id: int,
    bot_login: str = DEFAULT_BOT_LOGIN,
    create: bool = True,
    overtaken: bool = False,
) -> Sticky | None:
    """Post or update the one sticky comment on PR `number`.

    The result says whose report it holds: the commit status must follow the comment, so a run
    whose report the comment does not hold (an older run re-run late) leaves the status alone.
    With `create` False (a run with nothing to say), a PR without the sticky gets none: None.
    """
    body = stamp(body, run_id)
    found = stickies(client.list_comments(number), marker, bot_login)
    if not found and not create:
        return None
    if not found:
        found = _create(client, number, body, marker, bot_login)
    plan = plan_sticky(found, body, run_id, overtaken=overtaken)
    _delete(client, number, plan.delete)
    if plan.edit:
        try:
            client.edit_comment(number, plan.keep.id, body)
        except GitHubError as exc:
            if exc.status != 404:
                raise
            # Deleted between the listing and the edit (by hand, or by a concurrent run): post anew.
            log.info("comment %s was deleted before it was edited: posting a new one", plan.keep.id)
            found = _create(client, number, body, marker, bot_login)
            plan = plan_sticky(found, body, run_id, overtaken=overtaken)
            _delete(client, number, plan.delete)
            if plan.edit:
                client.edit_comment(number, plan.keep.id, body)
    elif plan.keep.body != body:
        log.info(
            "comment %s already holds run %s's report (newer than %s): left as is",
            plan.keep.id,
            run_of(plan.keep.body),
            run_id,
        )
    held = run_id if plan.edit or plan.keep.body == body else run_of(plan.keep.body)
    return Sticky(plan.keep.id, held, held == run_id)


def _create(client: GitHubClient, number: int, body: str, marker: str, bot_login: str) -> list[Comment]:
    created = client.create_comment(number, body)
    # Two runs can both find none and both create one. Re-list: the oldest survives, and each run
    # deletes the newer duplicates, so whichever order they interleave, one remains.
    return stickies(client.list_comments(number), marker, bot_login) or [created]


def _delete(client: GitHubClient, number: int, duplicates: tuple[Comment, ...]) -> None:
    for duplicate in duplicates:
        if not client.delete_comment(number, duplicate.id):
            log.info("duplicate comment %s was already deleted by a concurrent run", duplicate.id)


def status_description(verdict: str, headline: str) -> str:
    """`verdict: headline` as one line of plain text within GitHub's 140 characters.

    The headline comes from the report, which the PR's code wrote: GitHub shows the description as
    text, so nothing is escaped, but control and format characters (newlines, bidi overrides, lone
    surrogates that would not even encode) are dropped and runs of whitespace become one space.
    """
    line = _plain(headline)  # linear: a headline is at most 100,000 characters (bot/diff/model.py)
    text = f"{_plain(verdict)}: {line}" if line else _plain(verdict)
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1].rstrip() + "…"


MAX_DESCRIPTION = 140  # GitHub refuses a longer commit status description


def _plain(text: str) -> str:
    # Cc: controls (newlines, tabs, escapes); Cf: format (bidi overrides, zero-width); Cs: lone
    # surrogates; Zl/Zp: line and paragraph separators.
    kept = "".join(" " if unicodedata.category(c) in _DROPPED else c for c in text)
    return " ".join(kept.split())


_DROPPED = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
