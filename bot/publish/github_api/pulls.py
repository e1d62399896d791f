"""Pull requests (REST "Pulls"): read a PR and its files, find PRs by head, open, edit, ask for reviews.

Opening a PR is not idempotent: one already open from the same branch is made ours
(docs/github.md, "Retries and idempotence", "The obsolete-skip PR").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.publish.github_api.errors import _guard
from bot.publish.github_api.records import PullRequest, _pull
from bot.publish.github_api.session import Session


class PullRequests(Session):
    """Pull requests."""

    @_guard("read pull request #{0}", again=True)
    def pull_request(self, number: int) -> PullRequest:
        p = self._repo.get_pull(number)
        merger = p.merged_by  # in the single-PR answer only: the list endpoints' `pull-request-simple` lacks it
        return replace(_pull(p), merged_by=merger.login if merger is not None else None)

    @_guard("list the files of pull request #{0}", again=True)
    def pull_request_files(self, number: int) -> list[str]:
        return [f.filename for f in self._repo.get_pull(number).get_files()]

    @_guard("find the pull requests from {0}:{1}", again=True)
    def pulls_from(
        self, owner: str, branch: str, *, state: str = "open", base: str | None = None, limit: int = 30
    ) -> list[PullRequest]:
        """PRs whose head is `owner:branch` (a fork's owner for a fork PR), newest first: one request."""
        found = []
        filters = {"base": base} if base else {}
        pulls = self._repo.get_pulls(state=state, head=f"{owner}:{branch}", sort="created", direction="desc", **filters)
        for pull in pulls:
            found.append(_pull(pull))
            if len(found) >= limit:
                break
        return found

    def find_open_pull(self, head_branch: str, base: str) -> PullRequest | None:
        """The open PR from this repository's `head_branch` into `base`, if any."""
        found = self.pulls_from(self.repository.split("/")[0], head_branch, base=base, limit=1)
        return found[0] if found else None

    @_guard("open a pull request from {0}")
    def create_pull(self, head_branch: str, base: str, title: str, body: str, *, draft: bool = False) -> PullRequest:
        """Open the PR (a draft with `draft`); when one from `head_branch` into `base` is already open (an
        earlier attempt whose answer was lost, or GitHub's 422 "A pull request already exists"), that one is made ours."""
        made = self._write_once(
            lambda: _pull(self._repo.create_pull(base=base, head=head_branch, title=title, body=body, draft=draft)),
            lambda: self.find_open_pull(head_branch, base),
            exists_ok=True,
        )
        if (made.title, made.body) != (title, body):
            self.edit_pull(made.number, title=title, body=body)
            made = replace(made, title=title, body=body)
        return made

    @_guard("request reviews on pull request #{0}", again=True)
    def request_reviews(self, number: int, reviewers: Sequence[str]) -> None:
        """Ask `reviewers` for a review: a login, or `org/team` for a team (by its slug). Asking again
        someone already asked changes nothing."""
        users = [r for r in reviewers if "/" not in r]
        teams = [r.split("/", 1)[1] for r in reviewers if "/" in r]
        self._repo.get_pull(number).create_review_request(reviewers=users, team_reviewers=teams)

    @_guard("edit pull request #{0}")
    def edit_pull(self, number: int, **changes: str) -> None:
        """Set the PR's `title`, `body` or `state` (PyGithub takes no other name)."""
        self._repo.get_pull(number).edit(**changes)
