"""Artifacts of earlier workflow runs: main's baseline JUnit, the history of baseline reports, a PR's last report."""

from __future__ import annotations

import io
import json
import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.errors import BotError
from bot.publish.github_api import GitHubClient, WorkflowRun

log = logging.getLogger(__name__)

BASELINE_ARTIFACT = "export-baseline"
REPORT_ARTIFACT = "export-report"


class ArtifactError(BotError, ValueError):
    """An artifact that is not what the bot wrote (bad zip, unsafe paths, unreadable report)."""


@dataclass(frozen=True)
class Fetched:
    run: WorkflowRun
    data: bytes  # the artifact's zip


def fetch_artifacts(
    client: GitHubClient,
    workflow: str,
    name: str,
    *,
    branch: str | None = None,
    head_sha: str | None = None,
    status: str | None = "success",
    limit: int = 1,
) -> list[Fetched]:
    """Artifact `name` of the newest `limit` runs of `workflow` that have it, newest first.

    Runs whose artifact expired or was never uploaded (a failed sweep) are passed over.
    """
    found = []
    # Look a little further back than `limit`: some runs may lack the artifact.
    for run in client.workflow_runs(workflow, branch=branch, head_sha=head_sha, status=status, limit=limit + 5):
        artifact = next((a for a in client.artifacts(run.id) if a.name == name and not a.expired), None)
        if artifact is None:
            log.info("run %s of %s has no artifact %s", run.id, workflow, name)
            continue
        found.append(Fetched(run, client.download(artifact)))
        if len(found) >= limit:
            break
    return found


def _safe_names(archive: zipfile.ZipFile) -> list[str]:
    names = []
    for name in archive.namelist():
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts or "\\" in name:
            raise ArtifactError(f"artifact member {name!r} would land outside the target folder")
        names.append(name)
    return names


def extract(data: bytes, dest: Path) -> list[Path]:
    """Unpack an artifact zip into `dest`; returns the files written."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ArtifactError(f"the artifact is not a zip file ({exc})") from exc
    written = []
    with archive:
        for name in _safe_names(archive):
            if name.endswith("/"):
                continue
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(name))
            written.append(target)
    return written


def read_json_member(data: bytes, member: str = "report.json") -> dict | None:
    """`member` of an artifact zip as JSON (found at any depth), or None when absent."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [n for n in _safe_names(archive) if PurePosixPath(n).name == member]
            if not names:
                return None
            return json.loads(archive.read(min(names, key=len)).decode("utf-8"))
    except (zipfile.BadZipFile, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArtifactError(f"cannot read {member} from the artifact ({exc})") from exc


def download_baseline(
    client: GitHubClient, workflow: str, dest: Path, *, name: str = BASELINE_ARTIFACT, branch: str = "main"
) -> WorkflowRun | None:
    """The newest sweep's baseline on `branch` into `dest`; None when there is none yet.

    Runs are picked by their baseline artifact, not by their conclusion: a later job of the
    run (the obsolete-skip PR) can fail and conclude the run `failure`, and that must not leave
    every PR diffing against an older sweep night after night (docs/github.md).
    """
    fetched = fetch_artifacts(client, workflow, name, branch=branch, status=None)
    if not fetched:
        return None
    dest.mkdir(parents=True, exist_ok=True)
    files = extract(fetched[0].data, dest)
    log.info("baseline of run %s (%s): %d file(s)", fetched[0].run.id, fetched[0].run.head_sha, len(files))
    return fetched[0].run
