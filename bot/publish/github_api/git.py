"""Git data (REST "Git database": refs, trees, blobs, commits; and "Repository contents"): the bot's
branches and the commits it writes onto them.

A branch of main's state moves only from where this job read it (compare-and-swap, `RefMoved`);
docs/github.md, "Main's state: compare-and-swap, never a concurrency group".
"""

from __future__ import annotations

from github import GithubException, InputGitTreeElement

from bot.publish.github_api.errors import GitHubError, RefMoved, _guard, _unless_gone, reason
from bot.publish.github_api.session import Session


class GitData(Session):
    """Branches and the commits written onto them."""

    def _ref(self, branch: str):
        """The branch's ref, fetched (its `url` then is GitHub's `/git/refs/…` one), or None."""
        ref = self._repo.get_git_ref(f"heads/{branch}")
        return ref if _unless_gone(ref.complete) else None

    @_guard("read branch {0}", again=True)
    def branch_sha(self, branch: str) -> str | None:
        ref = self._ref(branch)
        return ref.object.sha if ref else None

    @_guard("read folder {1} at {0}", again=True)
    def read_folder(self, sha: str, folder: str) -> dict[str, str]:
        """The text files directly inside `folder` at commit `sha`: name → text."""
        found = {}
        for item in self._repo.get_contents(folder, ref=sha):
            if item.type == "file":
                found[item.name] = self._repo.get_contents(item.path, ref=sha).decoded_content.decode("utf-8")
        return found

    @_guard("commit files onto {0}", again=True)
    def commit_files(self, parent_sha: str, files: dict[str, str], message: str) -> str:
        """One commit on top of `parent_sha` changing `files` (path → text); returns its SHA."""
        parent = self._repo.get_git_commit(parent_sha)
        elements = [
            InputGitTreeElement(path, "100644", "blob", sha=self._repo.create_git_blob(text, "utf-8").sha)
            for path, text in sorted(files.items())
        ]
        tree = self._repo.create_git_tree(elements, base_tree=parent.tree)
        return self._repo.create_git_commit(message, tree, [parent]).sha

    @_guard("read commit {0}", again=True)
    def commit_message(self, sha: str) -> str:
        """The message of commit `sha` (what a branch's writer said of its update)."""
        return self._repo.get_git_commit(sha).message or ""

    @_guard("move branch {0}", again=True)
    def set_branch(self, branch: str, sha: str, *, force: bool = False) -> None:
        """Create the branch at `sha`, or move it there (force: also when not a fast-forward)."""
        ref = self._ref(branch)
        if ref is not None:
            # Without force GitHub answers 422 "Update is not a fast forward": someone pushed.
            ref.edit(sha, force=force)
            return

        def find() -> bool | None:
            # After a lost answer or "Reference already exists": done when the branch is at `sha`.
            current = self._ref(branch)
            if current is None:
                return None
            if current.object.sha != sha:
                if not force:
                    raise GitHubError(
                        f"branch {branch} already exists at {current.object.sha[:12]}, not at {sha[:12]}: "
                        "someone else created it; nothing was changed"
                    )
                current.edit(sha, force=True)
            return True

        self._write_once(lambda: self._repo.create_git_ref(f"refs/heads/{branch}", sha), find, exists_ok=True)

    @_guard("move branch {0}")
    def swap_branch(self, branch: str, expected: str | None, sha: str | None, *, force: bool = False) -> None:
        """Move `branch` from `expected` to `sha` (None: absent, so create it, or delete it), compare-and-swap.

        The branch is read again just before the write: when it is no longer at `expected`, another
        writer moved it since this job read it, and `RefMoved` is raised with nothing changed. A
        creation is GitHub's own check (a ref that exists is refused), and so is a move without
        `force` (GitHub moves the ref only onto a descendant of where it is then). A `force` move
        can only be checked by the read before it: a writer acting within that one request's time
        is overwritten (docs/github.md, "Main's state").
        """
        ref = self._ref(branch)
        current = ref.object.sha if ref is not None else None
        if current != expected:
            raise RefMoved(
                f"branch {branch} moved to {(current or 'nothing')[:12]} since this job read it at "
                f"{(expected or 'nothing')[:12]}: another job updated it; this one changed nothing"
            )
        if sha is None:
            if ref is not None:
                self.delete_branch(branch)
            return
        if ref is None:
            self._create_ref(branch, sha)
            return
        try:
            ref.edit(sha, force=force)
        except GithubException as exc:
            if exc.status == 422 and "fast forward" in reason(exc):
                raise RefMoved(f"branch {branch} moved while this job wrote it: this one changed nothing") from exc
            raise

    def _create_ref(self, branch: str, sha: str) -> None:
        """Create `branch` at `sha`; one that exists elsewhere is another writer's (`RefMoved`)."""

        def find() -> bool | None:
            current = self._ref(branch)
            if current is None:
                return None
            if current.object.sha != sha:
                raise RefMoved(
                    f"branch {branch} was created at {current.object.sha[:12]} by another job "
                    "while this one ran: this one changed nothing"
                )
            return True

        self._write_once(lambda: self._repo.create_git_ref(f"refs/heads/{branch}", sha), find, exists_ok=True)

    @_guard("delete branch {0}")
    def delete_branch(self, branch: str) -> None:
        ref = self._ref(branch)
        if ref is None:
            return
        try:
            ref.delete()
        except GithubException as exc:
            # A retried DELETE whose first answer was lost meets 422: done if the branch is gone.
            if exc.status != 422 or self._ref(branch) is not None:
                raise
