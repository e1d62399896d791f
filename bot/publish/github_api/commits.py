"""Commits (REST "Commits", "Commit statuses", "Check runs"): the gate's status, the report's check run, a
commit's PRs and author, the branches it heads, and the merge base from the compare API.

docs/github.md: "Check run", "The tracking issue of main's regressions" (a culprit's PR and
author), "The merge base".
"""

from __future__ import annotations

from urllib.parse import quote

from github import GithubException

from bot.publish.github_api.errors import GitHubError, _guard
from bot.publish.github_api.records import CommitStatus, PullRequest, _pull
from bot.publish.github_api.session import Session

STATUS_CONTEXT = "export-conformance"  # the required check: the gate's verdict only
# A dispatched `/export-check` run that looks at part of the PR (models, failed, probe) reports here.
COMMAND_CONTEXT = "export-conformance/command"
# The verdict of docs/diff.md → a commit status state. Statuses have no "neutral"; incomplete
# results must never read as a pass, and "error" is GitHub's word for "the check itself broke".
# "pending" while a run works; "error" also says a run ended without a verdict (cancelled).
STATUS_STATES = {"success": "success", "failure": "failure", "neutral": "error", "pending": "pending", "error": "error"}


class Commits(Session):
    """Statuses, check runs and what GitHub knows of a commit."""

    # --- a commit's pull requests and author -------------------------------------------------
    @_guard("list the pull requests of commit {0}", again=True)
    def commit_pulls(self, sha: str) -> list[PullRequest]:
        """The pull requests GitHub associates with a commit (the one that merged it, for a commit on main)."""
        try:
            return [_pull(p) for p in self._repo.get_commit(sha).get_pulls()]
        except GithubException as exc:
            if exc.status == 422:  # "No commit found for SHA": a commit GitHub does not know has no PR
                return []
            raise

    @_guard("read commit {0}", again=True)
    def commit_author(self, sha: str) -> str | None:
        """The GitHub account that authored a commit; None when none matches its email, or GitHub lacks the commit."""
        try:
            author = self._repo.get_commit(sha).author
        except GithubException as exc:
            if exc.status in (404, 422):  # "No commit found for SHA"
                return None
            raise
        return author.login if author is not None else None

    # --- statuses and check runs -------------------------------------------------------------
    @_guard("set the commit status of {0}")
    def set_status(
        self, sha: str, verdict: str, description: str, target_url: str | None = None, *, context: str = STATUS_CONTEXT
    ) -> None:
        state = STATUS_STATES[verdict]
        kwargs = {"target_url": target_url} if target_url else {}
        # GitHub rejects descriptions longer than 140 characters.
        self._repo.get_commit(sha).create_status(state, description=description[:140], context=context, **kwargs)

    @_guard("create the check run on {0}")
    def create_check_run(
        self, sha: str, name: str, conclusion: str, outputs: list[dict], details_url: str | None = None
    ) -> int:
        """A completed check run on `sha`; each further output adds its batch of annotations (GitHub appends them)."""
        kwargs = {"details_url": details_url} if details_url else {}
        run = self._repo.create_check_run(
            name, sha, status="completed", conclusion=conclusion, output=outputs[0], **kwargs
        )
        for more in outputs[1:]:
            run.edit(output=more)
        return run.id

    @_guard("read the commit statuses of {0}", again=True)
    def current_status(self, sha: str, *, context: str = STATUS_CONTEXT) -> CommitStatus | None:
        """The latest status of `context` on `sha` (the combined status holds each context's latest)."""
        for status in self._repo.get_commit(sha).get_combined_status().statuses:
            if status.context == context:
                return CommitStatus(status.state, status.description or "", status.target_url or "")
        return None

    # --- where a commit stands: the merge base, the branches it heads -------------------------
    @_guard("find the merge base of {0} and {1}", again=True)
    def merge_base(self, base: str, head: str) -> str:
        """The commit `head` branched off `base` (a branch or a SHA): the compare API's `merge_base_commit`."""
        sha = self._repo.compare(base, head).merge_base_commit.sha
        if not (isinstance(sha, str) and len(sha) == 40 and all(c in "0123456789abcdef" for c in sha)):
            raise GitHubError(f"GitHub's comparison of {base}...{head} named no merge base commit")
        return sha

    @_guard("list the branches whose head is {0}", again=True)
    def branches_at(self, sha: str) -> list[str]:
        """This repository's branches whose head commit is `sha` (GitHub's `branches-where-head`)."""
        try:
            _, data = self._gh.requester.requestJsonAndCheck(
                "GET", f"{self._repo.url}/commits/{quote(sha, safe='')}/branches-where-head"
            )
        except GithubException as exc:
            if exc.status == 422:  # "No commit found for SHA": a commit unknown here heads no branch here
                return []
            raise
        return [str(b.get("name")) for b in data or () if isinstance(b, dict)]
