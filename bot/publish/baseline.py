"""Artifacts of earlier workflow runs: main's baseline JUnit, the history of baseline reports, a PR's last report."""

from __future__ import annotations

import io
import json
import logging
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.errors import BotError
from bot.publish.github_api import ArtifactTooLarge, GitHubClient, WorkflowRun

log = logging.getLogger(__name__)

BASELINE_ARTIFACT = "export-baseline"
REPORT_ARTIFACT = "export-report"


class ArtifactError(BotError, ValueError):
    """An artifact that is not what the bot wrote (bad zip, unsafe paths, unreadable report)."""


@dataclass(frozen=True)
class Caps:
    """Size caps, in bytes, for what a run uploaded: the archive (checked before it is downloaded) and
    what its members inflate to (checked before inflating, and while reading)."""

    archive: int = 256 << 20
    inflated: int = 512 << 20

    @classmethod
    def from_settings(cls, settings) -> Caps:
        return cls(int(settings.artifact_max_mb * (1 << 20)), int(settings.artifact_member_max_mb * (1 << 20)))


@dataclass(frozen=True)
class Fetched:
    run: WorkflowRun
    data: bytes  # the artifact's zip


def fetch_artifacts(
    client: GitHubClient,
    workflow: str,
    name: str,
    *,
    accept: Callable[[WorkflowRun], bool],
    branch: str | None = None,
    head_sha: str | None = None,
    status: str | None = "success",
    limit: int = 1,
    scan: int = 60,
    caps: Caps = Caps(),
    skip_oversized: bool = False,
) -> list[Fetched]:
    """Artifact `name` of the newest `limit` runs of `workflow` that `accept` takes and that have it, newest first.

    `accept` decides from GitHub's record of the run (bot/publish/trust.py): the listing's filters
    (`branch` matches a branch *name*, which a fork chooses) only narrow the search. Runs whose
    artifact expired or was never uploaded (a failed sweep) are passed over; at most `scan` runs
    are looked at, so a flood of other runs ends the search instead of hanging it. An artifact over
    the cap is an error, or with `skip_oversized` (a PR's runs) passed over like a missing one.
    """
    found = []
    for run in client.workflow_runs(workflow, branch=branch, head_sha=head_sha, status=status, limit=limit + scan):
        if not accept(run):
            log.info("run %s of %s (%s from %s) is not one to read here", run.id, workflow, run.event, run.head_repo)
            continue
        artifact = next((a for a in client.artifacts(run.id) if a.name == name and not a.expired), None)
        if artifact is None:
            log.info("run %s of %s has no artifact %s", run.id, workflow, name)
            continue
        try:
            found.append(Fetched(run, client.download(artifact, max_bytes=caps.archive)))
        except ArtifactTooLarge as exc:
            if not skip_oversized:
                raise
            log.warning("run %s: %s", run.id, exc)
            continue
        if len(found) >= limit:
            break
    return found


def _open(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ArtifactError(f"the artifact is not a zip file ({exc})") from exc


def _safe_members(archive: zipfile.ZipFile, cap: int) -> list[zipfile.ZipInfo]:
    """The members, refused when one would land outside the target folder or all would inflate past `cap`."""
    members, declared = [], 0
    for info in archive.infolist():
        path = PurePosixPath(info.filename)
        if path.is_absolute() or ".." in path.parts or "\\" in info.filename:
            raise ArtifactError(f"artifact member {info.filename!r} would land outside the target folder")
        declared += info.file_size
        if declared > cap:
            raise ArtifactError(_over(info.filename, cap))
        members.append(info)
    return members


def _over(name: str, cap: int) -> str:
    return (
        f"artifact member {name!r} inflates past the {cap}-byte cap "
        "(artifact-member-max-mb in [tool.export-bot]): not read"
    )


def _stream(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int, sink) -> int:
    """Inflate one member into `sink` in chunks, stopping past `budget` bytes (the declared size can lie)."""
    written = 0
    with archive.open(info) as member:
        while chunk := member.read(1 << 16):
            written += len(chunk)
            if written > budget:
                raise ArtifactError(_over(info.filename, budget))
            sink(chunk)
    return written


def extract(data: bytes, dest: Path, *, caps: Caps = Caps()) -> list[Path]:
    """Unpack an artifact zip into `dest`; returns the files written. Nothing is left behind when it fails."""
    written: list[Path] = []
    with _open(data) as archive:
        members = _safe_members(archive, caps.inflated)
        budget = caps.inflated
        try:
            for info in members:
                if info.is_dir():
                    continue
                target = dest / info.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                written.append(target)
                with target.open("wb") as out:
                    budget -= _stream(archive, info, budget, out.write)
        except (zipfile.BadZipFile, zlib.error, EOFError, ArtifactError) as exc:
            for path in written:
                path.unlink(missing_ok=True)
            if isinstance(exc, ArtifactError):
                raise
            raise ArtifactError(f"the artifact is not a readable zip file ({exc})") from exc
    return written


def read_json_member(data: bytes, member: str = "report.json", *, caps: Caps = Caps()) -> dict | None:
    """`member` of an artifact zip as JSON (found at any depth), or None when absent."""
    try:
        with _open(data) as archive:
            found = [i for i in _safe_members(archive, 1 << 62) if PurePosixPath(i.filename).name == member]
            if not found:
                return None
            info = min(found, key=lambda i: len(i.filename))
            if info.file_size > caps.inflated:
                raise ArtifactError(_over(info.filename, caps.inflated))
            chunks: list[bytes] = []
            _stream(archive, info, caps.inflated, chunks.append)
            return json.loads(b"".join(chunks).decode("utf-8"))
    except (zipfile.BadZipFile, zlib.error, EOFError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ArtifactError(f"cannot read {member} from the artifact ({exc})") from exc


def download_baseline(
    client: GitHubClient,
    workflow: str,
    dest: Path,
    *,
    name: str = BASELINE_ARTIFACT,
    branch: str = "main",
    caps: Caps = Caps(),
) -> WorkflowRun | None:
    """The newest sweep's baseline on `branch` into `dest`; None when there is none yet.

    Only this repository's own sweeps count (trust.is_sweep): a fork's run on a branch it named
    `main` is never a baseline. Runs are picked by their baseline artifact, not by their
    conclusion: a later job of the run (the obsolete-skip PR) can fail and conclude the run
    `failure`, and that must not leave every PR diffing against an older sweep night after night
    (docs/github.md).
    """
    from bot.publish.trust import is_sweep

    fetched = fetch_artifacts(
        client,
        workflow,
        name,
        accept=lambda run: is_sweep(run, client.repository, branch),
        branch=branch,
        status=None,
        caps=caps,
    )
    if not fetched:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    files = extract(fetched[0].data, dest, caps=caps)
    log.info("baseline of run %s (%s): %d file(s)", fetched[0].run.id, fetched[0].run.head_sha, len(files))
    return fetched[0].run
