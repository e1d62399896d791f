"""Issues (REST "Issues"): issue and PR comments, reactions on them, labels, and the tracking issue.

GitHub serves a PR's conversation as an issue's, so the sticky comment, `/export-check` replies
and PR labels live here. A comment or an issue is posted once: after an answer that hides whether
it was made, they are listed again first (docs/github.md, "Retries and idempotence", "The tracking
issue of main's regressions").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from github import GithubException

from bot.publish.github_api.errors import _guard, _unless_gone
from bot.publish.github_api.records import Comment, Issue, _comment, _issue
from bot.publish.github_api.session import Session

log = logging.getLogger(__package__)

REACTIONS = frozenset({"eyes", "rocket", "confused", "+1", "-1"})


class Issues(Session):
    """Comments, reactions, issues and labels."""

    # --- comments and reactions -------------------------------------------------------------
    @_guard("list the comments of #{0}", again=True)
    def list_comments(self, number: int) -> list[Comment]:
        return [_comment(c) for c in self._repo.get_issue(number).get_comments()]

    @_guard("comment on #{0}")
    def create_comment(self, number: int, body: str) -> Comment:
        """Post a comment. After an answer that hides whether it was posted, the comments are re-listed
        and one with exactly this body counts as posted: callers make their bodies unique (a reply names
        the comment it answers, a sticky comment its run)."""
        issue = self._repo.get_issue(number)

        def find() -> Comment | None:
            return next((c for c in reversed(self.list_comments(number)) if c.body.rstrip() == body.rstrip()), None)

        return self._write_once(lambda: _comment(issue.create_comment(body)), find)

    @_guard("edit comment {1}")
    def edit_comment(self, number: int, comment_id: int, body: str) -> None:
        self._repo.get_issue(number).get_comment(comment_id).edit(body)

    @_guard("delete comment {1}")
    def delete_comment(self, number: int, comment_id: int) -> bool:
        """False when it was already gone (a concurrent run deleted it first)."""
        return _unless_gone(self._repo.get_issue(number).get_comment(comment_id).delete)

    @_guard("read comment {0}", again=True)
    def issue_comment(self, comment_id: int) -> tuple[int, Comment] | None:
        """The issue (or PR) number comment `comment_id` is on, and the comment; None when it is gone."""
        try:
            # The number is not part of the comment's URL: any issue object reaches it.
            found = self._repo.get_issue(1).get_comment(comment_id)
            number = int(found.issue_url.rstrip("/").rsplit("/", 1)[-1])
        except GithubException as exc:
            if exc.status == 404:
                return None
            raise
        return number, _comment(found)

    @_guard("react {2!r} to comment {1}")
    def react(self, number: int, comment_id: int, content: str) -> bool:
        """False when the comment is gone (its author deleted it since the event named it)."""
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}")
        done = _unless_gone(lambda: self._repo.get_issue(number).get_comment(comment_id).create_reaction(content))
        if not done:
            log.info("comment %s is gone: no %s reaction", comment_id, content)
        return done

    # --- issues (the tracking issue of main's regressions) -----------------------------------
    @_guard("list the issues {0} opened", again=True)
    def issues_by(self, creator: str, *, state: str = "open", labels: tuple[str, ...] = ()) -> list[Issue]:
        """Issues (never pull requests, which GitHub lists here too) `creator` opened, oldest first."""
        filters = {"labels": list(labels)} if labels else {}
        found = self._repo.get_issues(state=state, creator=creator, sort="created", direction="asc", **filters)
        return [i for i in map(_issue, found) if not i.is_pull]

    @_guard("read issue #{0}", again=True)
    def issue(self, number: int) -> Issue:
        """The issue as it is now (a compare-and-swap's second look before a write)."""
        return _issue(self._repo.get_issue(number))

    @_guard("open an issue")
    def create_issue(self, title: str, body: str, *, creator: str) -> Issue:
        """Open an issue. After an answer that hides whether it was opened, `creator`'s open issues are
        re-listed and one with exactly this title and body counts as opened."""

        def find() -> Issue | None:
            return next(
                (i for i in reversed(self.issues_by(creator)) if (i.title, i.body.rstrip()) == (title, body.rstrip())),
                None,
            )

        return self._write_once(lambda: _issue(self._repo.create_issue(title=title, body=body)), find)

    @_guard("edit issue #{0}")
    def edit_issue(self, number: int, **changes: str) -> None:
        """Set the issue's `body`, `state` or `state_reason`. An edit states the end result: repeating
        it after a lost answer is harmless."""
        self._repo.get_issue(number).edit(**changes)

    # --- labels -----------------------------------------------------------------------------
    @_guard("label pull request #{0}", again=True)
    def add_labels(self, number: int, labels: Sequence[str]) -> None:
        """Add `labels` to the PR (GitHub creates a label the repository lacks); adding one it has changes nothing."""
        self._repo.get_issue(number).add_to_labels(*labels)
