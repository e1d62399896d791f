"""What changed between two git refs, and file contents at a ref: the only module of `bot.select` that calls git."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BotError


class GitError(BotError, RuntimeError):
    """A git command failed; the message names the command, the repository and git's own words."""


@dataclass(frozen=True)
class Change:
    """One line of `git diff --name-status`: status letter (A, M, D, R, C, T), path, and the old path of a rename."""

    status: str
    path: str
    old_path: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the change touches: a rename removes the old path and adds the new one."""
        return (self.old_path, self.path) if self.old_path else (self.path,)


def _git(repo: Path | str, *args: str, input: bytes | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
    command = ["git", "-C", str(repo), *args]
    try:
        done = subprocess.run(command, input=input, capture_output=True, check=False)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    if done.returncode not in ok:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(
            f"`git {' '.join(args)}` in {repo} failed: {message[-1] if message else 'exit ' + str(done.returncode)}"
        )
    return done.stdout


def resolve(repo: Path | str, ref: str) -> str:
    """The commit SHA `ref` names (so the selection records exactly what it compared)."""
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()


def merge_base(repo: Path | str, base: str, head: str) -> str:
    """The commit `head` branched from `base` at: the left side of the three-dot diff a pull request shows."""
    return _git(repo, "merge-base", base, head).decode().strip()


def parse_name_status(output: str) -> list[Change]:
    """Parse `git diff --name-status -z` output (NUL-separated; renames and copies carry two paths)."""
    fields = output.split("\0")
    changes, i = [], 0
    while i < len(fields) and fields[i]:
        status = fields[i][0]
        if status in "RC":
            changes.append(Change(status, fields[i + 2], fields[i + 1]))
            i += 3
        else:
            changes.append(Change(status, fields[i + 1]))
            i += 2
    return changes


def changed_files(repo: Path | str, base: str, head: str) -> list[Change]:
    """Files changed on `head` since it branched from `base` (three dots, as a pull request shows them), renames followed."""
    out = _git(repo, "diff", "--name-status", "-z", "-M", "--no-ext-diff", f"{base}...{head}", "--")
    return parse_name_status(out.decode("utf-8", errors="replace"))


def parse_hunks(output: str) -> dict[str, list[tuple[int, int]]]:
    """Path → the head's changed line ranges (inclusive) from `git diff -U0` output; pure deletions add none."""
    return _hunks(output, "+++ ", "b/", _HUNK, insertions=False)


def _hunks(output: str, header: str, prefix: str, hunk: re.Pattern, *, insertions: bool) -> dict:
    """One side of `git diff -U0` output: path (from `header` lines) → its hunks' inclusive line ranges.

    A hunk of no line on this side is an insertion (base side: `(n + 1, n)`, inserted after line n)
    when `insertions`, else nothing (head side: a pure deletion changed no head line).
    """
    ranges: dict[str, list[tuple[int, int]]] = {}
    path = None
    for line in output.splitlines():
        if line.startswith(header):
            name = line[len(header) :]
            path = name[len(prefix) :] if name.startswith(prefix) else None  # `/dev/null`: no such side
        elif line.startswith("@@ ") and path is not None:
            match = hunk.match(line)
            if match:
                start, count = int(match[1]), int(match[2]) if match[2] is not None else 1
                if count:
                    ranges.setdefault(path, []).append((start, start + count - 1))
                elif insertions:
                    ranges.setdefault(path, []).append((start + 1, start))
    return ranges


_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def changed_lines(repo: Path | str, base: str, head: str) -> dict[str, list[tuple[int, int]]]:
    """The lines `head` added or changed since it branched from `base`, per file: what a PR's diff hunks cover."""
    out = _git(repo, "diff", "-U0", "-M", "--no-ext-diff", "--no-color", f"{base}...{head}", "--")
    return parse_hunks(out.decode("utf-8", errors="replace"))


def parse_base_hunks(output: str) -> dict[str, list[tuple[int, int]]]:
    """Path → the base's changed lines from `git diff -U0` output, in the base's numbering (the old path of a
    rename): (first, last) inclusive for lines removed or rewritten, (n + 1, n) for lines inserted after line n.
    An added file has no base lines."""
    return _hunks(output, "--- ", "a/", _BASE_HUNK, insertions=True)


_BASE_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def changed_base_lines(repo: Path | str, base: str, head: str) -> dict[str, list[tuple[int, int]]]:
    """The lines of the merge base that `head` removed, rewrote or inserted between, per base path (`parse_base_hunks`)."""
    out = _git(repo, "diff", "-U0", "-M", "--no-ext-diff", "--no-color", f"{base}...{head}", "--")
    return parse_base_hunks(out.decode("utf-8", errors="replace"))


def list_files(repo: Path | str, ref: str, under: str) -> list[str]:
    """Paths of the files below `under` at `ref` (empty when the folder does not exist there)."""
    out = _git(repo, "ls-tree", "-r", "--name-only", "-z", ref, "--", under.rstrip("/") + "/")
    return [p for p in out.decode("utf-8", errors="replace").split("\0") if p]


def read_files(repo: Path | str, ref: str, paths: Iterable[str]) -> dict[str, str]:
    """The text of each path at `ref`, in one `git cat-file --batch` process; missing paths are left out.

    One process for hundreds of files: a `git show` per file would cost seconds on the real tree.
    """
    paths = list(dict.fromkeys(paths))
    return _cat(repo, {path: f"{ref}:{path}" for path in paths})


def list_blobs(repo: Path | str, ref: str) -> dict[str, str]:
    """Every file at `ref` → its blob id, from one `git ls-tree` (submodules and links left out)."""
    out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", ref)
    blobs = {}
    for record in out.decode("utf-8", errors="replace").split("\0"):
        meta, _, path = record.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == "blob":
            blobs[path] = fields[2]
    return blobs


def read_blobs(repo: Path | str, blobs: Mapping[str, str]) -> dict[str, str]:
    """path → text of the blob ids `list_blobs` gave, in one `git cat-file --batch` process.

    By id rather than `ref:path`: git then resolves no path through the trees, three times
    faster for the two thousand files of the real tree.
    """
    return _cat(repo, dict(blobs))


def _cat(repo: Path | str, requests: Mapping[str, str]) -> dict[str, str]:
    """key → text of the object each request names (`ref:path` or a blob id); missing objects left out."""
    if not requests:
        return {}
    out = _git(repo, "cat-file", "--batch", input="".join(f"{r}\n" for r in requests.values()).encode())
    texts, pos = {}, 0
    for key in requests:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[-1] == b"missing" or header[1] != b"blob":
            if len(header) >= 3 and header[1] != b"blob":
                pos += int(header[2]) + 1  # a tree or submodule at that path: skip its body
            continue
        size = int(header[2])
        texts[key] = out[pos : pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return texts


def grep(
    repo: Path | str, ref: str, pattern: str, pathspecs: Iterable[str], *, mode: str = "perl", after: int = 0
) -> list[tuple[str, str]]:
    """(path, line) for each line at `ref` matching `pattern`.

    `mode`: `perl` (PCRE; git raises GitError when built without it), `basic` (POSIX
    basic regex), or `fixed` (one fixed string per line of `pattern`).

    `git grep` on a tree searches the object store in parallel C: on the real tree it
    finds every `__all__` and cross-type import in a fraction of the time it takes to
    hand the 30 MB of modeling code to Python.
    """
    if mode == "fixed":
        flags = ["-F"] + [arg for fixed in pattern.splitlines() for arg in ("-e", fixed)]
    else:
        flags = ["-P" if mode == "perl" else "-G", "-e", pattern]
    context = ["-A", str(after)] if after else []
    # Exit status 1 means "no line matched", not a failure.
    out = _git(repo, "grep", "--null", "--no-color", "-I", *context, *flags, ref, "--", *pathspecs, ok=(0, 1))
    prefix = f"{ref}:"
    found = []
    for record in out.decode("utf-8", errors="replace").split("\n"):
        path, sep, line = record.partition("\0")
        if sep:  # context separators (`--`) and the trailing empty record carry no NUL
            found.append((path[len(prefix) :] if path.startswith(prefix) else path, line))
    return found
