"""GitHub Actions (REST "Workflow runs", "Workflows", "Artifacts"): runs, attempts, re-runs, dispatches,
and the artifacts runs upload, listed by name and downloaded under a size cap.

docs/github.md: "Retries and idempotence" (a dispatch is looked for before it is repeated; an
artifact gone before its download), "The API budget" (artifacts by name).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import requests

from bot.publish.github_api.errors import ArtifactGone, ArtifactTooLarge, _guard, _status_of
from bot.publish.github_api.records import Artifact, WorkflowRun, _run
from bot.publish.github_api.session import Session


class Actions(Session):
    """Workflow runs and their artifacts."""

    @_guard("list the runs of workflow {0}", again=True)
    def workflow_runs(
        self,
        workflow: str,
        *,
        branch: str | None = None,
        head_sha: str | None = None,
        status: str | None = "success",
        event: str | None = None,
        created: str | None = None,
        limit: int = 1,
    ) -> list[WorkflowRun]:
        """Newest first, at most `limit`; `status` None lists runs whatever their state or conclusion."""
        given = (("branch", branch), ("head_sha", head_sha), ("status", status), ("event", event), ("created", created))
        filters = {k: v for k, v in given if v}
        runs = []
        for run in self._repo.get_workflow(workflow).get_runs(**filters):
            runs.append(_run(run))
            if len(runs) >= limit:
                break
        return runs

    @_guard("read workflow run {0}", again=True)
    def workflow_run(self, run_id: int) -> WorkflowRun:
        return _run(self._repo.get_workflow_run(run_id))

    @_guard("read attempt {1} of workflow run {0}", again=True)
    def run_attempt_state(self, run_id: int, attempt: int) -> tuple[str | None, str | None]:
        """(status, conclusion) of one attempt of a run (`…/runs/<id>/attempts/<n>`): an earlier attempt as
        it ended, the current one as it stands."""
        _, data = self._gh.requester.requestJsonAndCheck(
            "GET", f"{self._repo.url}/actions/runs/{run_id}/attempts/{attempt}"
        )
        data = data if isinstance(data, dict) else {}
        return data.get("status"), data.get("conclusion")

    @_guard("re-run workflow run {0}")
    def rerun(self, run_id: int) -> None:
        """Re-run a completed run (`POST …/runs/<id>/rerun`): the same run id, event, commit and ref, the
        next attempt, with the privileges of the actor who started it ("Re-running workflows and jobs")."""
        self._gh.requester.requestJsonAndCheck("POST", f"{self._repo.url}/actions/runs/{run_id}/rerun")

    @_guard("dispatch workflow {0}")
    def dispatch(
        self, workflow: str, ref: str, inputs: dict[str, str], *, started: Callable[[WorkflowRun], bool]
    ) -> WorkflowRun | None:
        """Dispatch `workflow` once; `started` recognises the run a dispatch whose answer was lost started.

        Returns that run when a retry found it, else None. GitHub lists a dispatched run a few
        seconds after accepting the dispatch, so it is looked for over the retry schedule.
        """
        # A minute of slack: the runner's clock and GitHub's need not agree.
        since = (datetime.now(timezone.utc) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        target = self._repo.get_workflow(workflow)

        def find() -> WorkflowRun | None:
            for poll in range(1, 5):
                for run in self.workflow_runs(
                    workflow, event="workflow_dispatch", created=f">={since}", status=None, limit=30
                ):
                    if started(run):
                        return run
                time.sleep(self._policy.wait(poll))
            return None

        def attempt() -> None:
            target.create_dispatch(ref, inputs, throw=True)

        return self._write_once(attempt, find)

    @_guard("list the artifacts of run {0}", again=True)
    def artifacts(self, run_id: int) -> list[Artifact]:
        return [
            Artifact(a.id, a.name, a.size_in_bytes, a.expired, a.archive_download_url)
            for a in self._repo.get_workflow_run(run_id).get_artifacts()
        ]

    @_guard("list the artifacts named {0}", again=True)
    def artifacts_named(self, name: str, *, runs: int, since: str | None = None) -> tuple[dict[int, Artifact], int]:
        """The repository's artifacts named `name`, newest first, by the run that uploaded them (its newest).

        One listing for every run (GitHub's `?name=` filter), instead of one request per run: each
        `github baseline` reads up to a hundred runs, and `GITHUB_TOKEN` has 1,000 requests an hour
        per repository, shared by every workflow. The listing is read page by page (100 a page,
        GitHub's largest) until it reaches artifacts made before `since` (the oldest run wanted, an
        ISO time: a run's artifacts are made after it starts) or its end; either way it holds every
        artifact of the runs wanted, and the oldest run id returned is 0. Only a listing flooded
        past `_artifact_pages(runs)` pages stops early, returning the oldest run id it reached.
        """
        found: dict[int, Artifact] = {}
        cut = _before(since)
        oldest = 0
        for index, a in enumerate(self._repo.get_artifacts(name=name)):
            if cut is not None and a.created_at is not None and a.created_at < cut:
                return found, 0
            run_id = a.workflow_run.id if a.workflow_run is not None else 0
            oldest = run_id
            if run_id and run_id not in found and not a.expired and a.name == name:
                found[run_id] = Artifact(a.id, a.name, a.size_in_bytes, a.expired, a.archive_download_url)
            if index + 1 >= _artifact_pages(runs) * 100:
                return found, oldest
        return found, 0

    @_guard("download artifact {0.name}", again=True)
    def download(self, artifact: Artifact, *, max_bytes: int | None = None) -> bytes:
        """The artifact's zip; one larger than `max_bytes` is refused before and while it is fetched.

        GitHub's `size_in_bytes` is checked first; the stream is bounded too, since what arrives
        need not be what the listing said.
        """
        if max_bytes is not None and artifact.size > max_bytes:
            raise ArtifactTooLarge(
                f"artifact {artifact.name} is {artifact.size} bytes, over the {max_bytes}-byte cap "
                "(artifact-max-mb in [tool.export-bot]): not downloaded"
            )
        # PyGithub has no artifact download; its requester follows GitHub's 302 to the blob
        # store (dropping the token for another host) and keeps our retries.
        try:
            _, _, chunks = self._gh.requester.getStream(artifact.download_url, chunk_size=1 << 16)
        except requests.HTTPError as exc:
            status = _status_of(exc)
            if status in (404, 410):  # GitHub's words for an artifact expired or deleted since the listing
                raise ArtifactGone(
                    f"artifact {artifact.name} expired or was deleted after it was listed", status
                ) from exc
            raise
        data, total = [], 0
        for chunk in chunks:
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise ArtifactTooLarge(
                    f"artifact {artifact.name} sent more than the {max_bytes}-byte cap "
                    "(artifact-max-mb in [tool.export-bot]): download stopped"
                )
            data.append(chunk)
        return b"".join(data)


# A day of slack under the oldest run wanted: the runner's clock, and the artifact store's, need not agree.
ARTIFACT_SLACK = timedelta(days=1)


def _before(since: str | None) -> datetime | None:
    """Where a name-filtered listing may stop: a day before `since` (an ISO time), None to read it all."""
    if not since:
        return None
    moment = datetime.fromisoformat(since.replace("Z", "+00:00"))
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)) - ARTIFACT_SLACK


def _artifact_pages(runs: int) -> int:
    """The most pages a name-filtered listing reads: a page per 100 runs wanted, and room for a busy
    repository's other runs of the same name (a fork's runs can upload any name) before it gives up."""
    return -(-max(runs, 1) // 100) + 9
