"""Collaborators (REST "Collaborators"): a user's permission on the repository, which decides who may
command the bot (docs/github.md, "`/export-check`").
"""

from __future__ import annotations

from urllib.parse import quote

from github import GithubException

from bot.publish.github_api.errors import _guard
from bot.publish.github_api.records import Permission
from bot.publish.github_api.session import Session


class Collaborators(Session):
    """Who may do what in the repository."""

    @_guard("read the permission of {0}", again=True)
    def permission(self, user: str) -> Permission:
        """The user's role (`admin`, `maintain`, `write`, `triage`, `read`, a custom role, or `none`)."""
        try:
            # One request for both fields (PyGithub's getters would make two).
            _, data = self._gh.requester.requestJsonAndCheck(
                "GET", f"{self._repo.url}/collaborators/{quote(user, safe='')}/permission"
            )
        except GithubException as exc:
            if exc.status == 404:  # not a collaborator, or not a user at all
                return Permission("none", "none")
            raise
        legacy = str(data.get("permission") or "none")
        return Permission(str(data.get("role_name") or legacy), legacy)
