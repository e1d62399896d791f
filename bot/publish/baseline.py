"""Artifacts of earlier workflow runs: main's baseline state, the history of baseline reports, a PR's last report.

One concept, four stages, four `baseline.py`: results (the state and how it is read), publish (its
artifacts on GitHub), jobs (the merge, show and due jobs) and cli (their options). This is the publish stage's.
"""

from __future__ import annotations

import io
import json
import logging
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bot.errors import BotError
from bot.publish.github_api import Artifact, ArtifactGone, ArtifactTooLarge, GitHubClient, WorkflowRun
from bot.results.baseline import Baseline

log = logging.getLogger(__name__)

BASELINE_ARTIFACT = "export-baseline"
REPORT_ARTIFACT = "export-report"
# The caller's own `workflow_dispatch` input that forces the full sweep
# (examples/transformers/.github/workflows/export-baseline.yml).
SWEEP_INPUTS = {"full": "true"}


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
    events: frozenset[str] | None = None,
) -> list[Fetched]:
    """Artifact `name` of the newest `limit` runs of `workflow` that `accept` takes and that have it, newest first.

    `accept` decides from GitHub's record of the run (bot/publish/trust.py): the listing's filters
    (`branch` matches a branch *name*, which a fork chooses) only narrow the search. Runs whose
    artifact expired or was never uploaded (a failed sweep) are passed over; at most `scan` runs
    are looked at, so a flood of other runs ends the search instead of hanging it. An artifact over
    the cap is an error, or with `skip_oversized` (a PR's runs) passed over like a missing one.
    `events` lists only runs of those events (see `list_runs`).
    """
    found = []
    listed = list_runs(client, workflow, events, branch=branch, head_sha=head_sha, status=status, limit=limit + scan)
    named = _Named(client, name, listed)
    for run in listed:
        if not accept(run):
            log.info("run %s of %s (%s from %s) is not one to read here", run.id, workflow, run.event, run.head_repo)
            continue
        artifact = named.of(run.id)
        if artifact is None:
            log.info("run %s of %s has no artifact %s", run.id, workflow, name)
            continue
        try:
            found.append(Fetched(run, client.download(artifact, max_bytes=caps.archive)))
        except ArtifactGone as exc:
            log.warning("run %s: %s; passed over", run.id, exc)
            continue
        except ArtifactTooLarge as exc:
            if not skip_oversized:
                raise
            log.warning("run %s: %s", run.id, exc)
            continue
        if len(found) >= limit:
            break
    return found


class _Named:
    """The artifacts named `name` by run, from one name-filtered listing made when first asked.

    The listing is read back to the oldest run listed (github_api.artifacts_named), so it holds
    every artifact of these runs. Only a listing flooded past its page bound stops short, and then
    a run it did not reach is asked for alone, so a truncated listing never hides an artifact.
    """

    def __init__(self, client: GitHubClient, name: str, runs: list[WorkflowRun]) -> None:
        self.client, self.name, self.runs = client, name, runs
        self.by_run: dict[int, Artifact] | None = None
        self.reached = 0

    def of(self, run_id: int) -> Artifact | None:
        if self.by_run is None:
            since = min((run.created_at for run in self.runs if run.created_at), default=None)
            self.by_run, self.reached = self.client.artifacts_named(self.name, runs=len(self.runs), since=since)
        if run_id in self.by_run:
            return self.by_run[run_id]
        if self.reached:  # the listing stopped short: a run it did not show is asked alone
            return next((a for a in self.client.artifacts(run_id) if a.name == self.name and not a.expired), None)
        return None


def newest_with(
    client: GitHubClient,
    workflow: str,
    name: str,
    *,
    accept: Callable[[WorkflowRun], bool],
    branch: str,
    events: frozenset[str] | None,
    scan: int = 10,
) -> WorkflowRun | None:
    """The newest of the last `scan` runs that `accept` takes and that hold artifact `name`, not downloaded."""
    listed = [run for run in list_runs(client, workflow, events, branch=branch, status=None, limit=scan) if accept(run)]
    named = _Named(client, name, listed)
    return next((run for run in listed if named.of(run.id) is not None), None)


def list_runs(client: GitHubClient, workflow: str, events: frozenset[str] | None, *, limit: int, **filters) -> list:
    """The newest `limit` runs of `workflow`, of `events` only when given (one listing per event, merged).

    A fork can start runs of any workflow file (its PR may edit it to run on `pull_request`), on a
    branch it names `main`: listed by branch alone, a flood of those would fill the scan window and
    push main's own runs out of it. Listed by the events only this repository can start, it cannot.
    """
    if events is None:
        return client.workflow_runs(workflow, limit=limit, **filters)
    runs = {
        run.id: run
        for event in sorted(events)
        for run in client.workflow_runs(workflow, event=event, limit=limit, **filters)
    }
    return [runs[i] for i in sorted(runs, reverse=True)][:limit]


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


def read_member(data: bytes, member: str, *, caps: Caps = Caps()) -> bytes | None:
    """`member` of an artifact zip (found at any depth, the shallowest first), inflated within the cap; None when absent."""
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
            return b"".join(chunks)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ArtifactError(f"cannot read {member} from the artifact ({exc})") from exc


def read_json_member(data: bytes, member: str = "report.json", *, caps: Caps = Caps()) -> dict | None:
    """`member` of an artifact zip as JSON (found at any depth), or None when absent."""
    raw = read_member(data, member, caps=caps)
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ArtifactError(f"cannot read {member} from the artifact ({exc})") from exc


MEASUREMENT_ARTIFACT = "export-measurement"
STATES_FOLDED = 3  # state artifacts folded: a merge that lost a race to a newer one loses nothing


@dataclass(frozen=True)
class MainState:
    """What `github baseline` folded: the state, and the runs it came from (GitHub's records)."""

    state: Baseline
    states: tuple[WorkflowRun, ...]  # runs whose state artifact was folded, newest first
    measurements: tuple[WorkflowRun, ...]  # runs whose measurement was not yet in those states
    converted: tuple[int, ...] = ()  # runs whose state was a version-1 JUnit folder


def download_baseline(
    client: GitHubClient,
    workflow: str,
    dest: Path,
    *,
    name: str = BASELINE_ARTIFACT,
    measurement: str = MEASUREMENT_ARTIFACT,
    branch: str = "main",
    caps: Caps = Caps(),
    scan: int = 60,
    keep: int = 10,
) -> MainState | None:
    """Main's state into `dest/baseline.json`: the newest 3 state artifacts folded with every measurement
    artifact of the last `scan` runs that none of them holds yet (docs/baseline.md); None when there is none.

    Only this repository's own runs on `branch` count (trust.is_sweep): a fork's run on a branch it
    named `main` is never a baseline. Runs are picked by their artifacts, not by their conclusion or
    status: a later job can fail the run, and a measurement is uploaded before the run's merge job,
    which GitHub may cancel while it is pending (docs/github.md).
    """
    from bot.results.baseline import fold
    from bot.results.baseline_json import STATE_FILE, write_state

    listed_states, measurements = _sweep_artifacts(client, workflow, branch, (name, measurement), scan)
    read = [(run, _read_state(client, run, artifact, caps)) for run, artifact in listed_states]
    states = [(run, part, v1) for run, (part, v1) in read if part is not None]
    extra = _unheld_measurements(client, measurements, frozenset().union(*(part.runs for _, part, _ in states)), caps)
    if not states and not extra:
        return None
    state = fold(*(part for _, part, _ in states), *(part for _, part in extra), keep=keep)
    write_state(dest / STATE_FILE, state)
    converted = tuple(run.id for run, _, v1 in states if v1)
    log.info("baseline: %d state(s), %d measurement(s) folded into %s", len(states), len(extra), dest / STATE_FILE)
    return MainState(state, tuple(run for run, _, _ in states), tuple(run for run, _ in extra), converted)


def _sweep_artifacts(
    client: GitHubClient, workflow: str, branch: str, names: tuple[str, str], scan: int
) -> tuple[list[tuple[WorkflowRun, Artifact]], list[tuple[WorkflowRun, Artifact]]]:
    """The state artifacts (the newest STATES_FOLDED) and the measurement artifacts of the last `scan`
    sweeps of `branch`, newest first; `names` is (state artifact, measurement artifact)."""
    from bot.publish.trust import SWEEP_EVENTS, is_sweep

    states, measurements = [], []
    listed = list_runs(client, workflow, SWEEP_EVENTS, branch=branch, status=None, limit=scan)
    state_named, measurement_named = (_Named(client, kind, listed) for kind in names)
    for run in listed:
        if not is_sweep(run, client.repository, branch):
            log.info("run %s of %s (%s from %s) is not one to read here", run.id, workflow, run.event, run.head_repo)
            continue
        state_artifact = state_named.of(run.id) if len(states) < STATES_FOLDED else None
        if state_artifact is not None:
            states.append((run, state_artifact))
        measured_artifact = measurement_named.of(run.id)
        if measured_artifact is not None:
            measurements.append((run, measured_artifact))
    return states, measurements


def _unheld_measurements(
    client: GitHubClient, measurements: list[tuple[WorkflowRun, Artifact]], held: frozenset[int], caps: Caps
) -> list[tuple[WorkflowRun, Baseline]]:
    """The measurements of runs no folded state holds yet, read; those passed over (logged) left out."""
    read = [
        (run, _read_measurement(client, run, artifact, caps)) for run, artifact in measurements if run.id not in held
    ]
    return [(run, part) for run, part in read if part is not None]


def _download(client: GitHubClient, run: WorkflowRun, artifact: Artifact, caps: Caps) -> bytes | None:
    """The artifact's zip, or None (logged) when it expired or was deleted since it was listed."""
    try:
        return client.download(artifact, max_bytes=caps.archive)
    except ArtifactGone as exc:
        log.warning("run %s: %s; passed over", run.id, exc)
        return None


def _read_state(client: GitHubClient, run: WorkflowRun, artifact: Artifact, caps: Caps) -> tuple[Baseline | None, bool]:
    """A run's state artifact: baseline.json (version 2), or a version-1 folder of JUnit converted at the
    run's commit as GitHub records it; True with a converted one; None when it is gone. Any other
    version is refused."""
    from bot.results.baseline_json import STATE_FILE, loads

    data = _download(client, run, artifact, caps)
    if data is None:
        return None, False
    raw = read_member(data, STATE_FILE, caps=caps)
    if raw is not None:
        return loads(_text(raw, run, STATE_FILE), where=f"{STATE_FILE} of run {run.id}"), False
    return _converted(data, run, caps), True


def _converted(data: bytes, run: WorkflowRun, caps: Caps) -> Baseline:
    from bot.results import read_results
    from bot.results.baseline_json import from_junit_folder

    with tempfile.TemporaryDirectory(prefix="export-bot-v1-") as folder:
        files = [f for f in extract(data, Path(folder), caps=caps) if f.suffix == ".xml"]
        if not files:
            raise ArtifactError(
                f"run {run.id}'s {BASELINE_ARTIFACT} holds neither baseline.json nor JUnit XML; delete the artifact"
            )
        results = read_results(files)
    if not results.results:
        raise ArtifactError(
            f"run {run.id}'s {BASELINE_ARTIFACT} is a version-1 baseline (JUnit XML) with no readable cell "
            f"({results.problems[0] if results.problems else 'no testcase'}); delete the artifact"
        )
    return from_junit_folder(
        results, commit=run.head_sha, time=run.created_at, run_id=run.id, where=f"run {run.id}'s {BASELINE_ARTIFACT}"
    )


def _read_measurement(client: GitHubClient, run: WorkflowRun, artifact: Artifact, caps: Caps) -> Baseline | None:
    """A run's measurement, or None (logged) when it speaks for another run than the one GitHub says uploaded it."""
    from bot.results.baseline_json import MEASUREMENT_FILE, loads

    data = _download(client, run, artifact, caps)
    if data is None:
        return None
    raw = read_member(data, MEASUREMENT_FILE, caps=caps)
    if raw is None:
        log.warning("run %s: its %s holds no %s; passed over", run.id, artifact.name, MEASUREMENT_FILE)
        return None
    part = loads(_text(raw, run, MEASUREMENT_FILE), where=f"{MEASUREMENT_FILE} of run {run.id}")
    others = {m.run_id for ms in part.cells.values() for m in ms} | set(part.runs) | {s.run_id for s in part.segments}
    if others - {run.id}:
        log.warning(
            "run %s: its %s speaks for run(s) %s; passed over", run.id, MEASUREMENT_FILE, sorted(others - {run.id})
        )
        return None
    elsewhere = sorted(_claimed_commits(part) - {run.head_sha})
    if elsewhere:
        # A push or sweep measures the commit GitHub says it ran: results placed at another commit would
        # stand at a merge base they were never measured at, or say who broke main.
        log.warning(
            "run %s: its %s places results at %s, not at the run's commit %s; passed over",
            run.id,
            MEASUREMENT_FILE,
            elsewhere[0][:12],
            (run.head_sha or "none")[:12],
        )
        return None
    return part


def _claimed_commits(part: Baseline) -> set[str]:
    """The commits a measurement says its run measured (a bisect step's are older main commits, on purpose)."""
    measured_at = {m.commit for ms in part.cells.values() for m in ms if m.source != "bisect"}
    tips = {s.commits[-1] for s in part.segments}
    return measured_at | tips | {c for c, _ in part.full_sweeps} | {c for c, _ in part.due}


def _text(raw: bytes, run: WorkflowRun, member: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArtifactError(f"run {run.id}'s {member} is not UTF-8 text ({exc}); delete the artifact") from None


def unfinished_sweeps(client: GitHubClient, workflow: str, branch: str, *, exclude: int = 0) -> list[WorkflowRun]:
    """The dispatched runs of `workflow` on `branch` not finished yet (queued, waiting or in progress), `exclude` left out.

    Dispatched runs are the sweeps a due reason started (docs/workflows.md, "When the due sweep
    starts"); the newest 30 are looked at, which holds every unfinished one.
    """
    runs = client.workflow_runs(workflow, branch=branch, event="workflow_dispatch", status=None, limit=30)
    return [run for run in runs if run.status != "completed" and run.id != exclude]


def start_sweep(client: GitHubClient, workflow: str, branch: str, seen: Collection[int]) -> WorkflowRun | None:
    """Dispatch the full sweep on `branch`; the run it started when a retry found it (a new run, not in `seen`).

    The workflow token may dispatch: `workflow_dispatch` is the one event it raises that starts a run.
    """
    return client.dispatch(workflow, branch, dict(SWEEP_INPUTS), started=lambda run: run.id not in seen)
