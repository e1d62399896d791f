"""The obsolete-skip PR: one branch, force-updated, one open PR edited in place, closed when nothing is left."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from bot.publish.github_api import GitHubClient

log = logging.getLogger(__name__)

BRANCH = "export-bot/obsolete-skips"
TITLE = "Skiplists: remove obsolete skips"
MARKER = "<!-- export-bot:obsolete-skips -->"


def obsolete_entries(entries: list[dict]) -> list[dict]:
    """The removals and narrowings of a proposal (added entries belong on the PR that broke them)."""
    return [e for e in entries if e.get("action") in ("remove", "narrow")]


def render_body(entries: list[dict], *, min_passes: int, run_url: str | None = None) -> str:
    lines = [
        MARKER,
        f"These skiplist entries are no longer needed: every cell they skip passed in the last "
        f"{min_passes} probe runs of the baseline sweep on main (a narrowed entry keeps the cells that still fail).",
        "",
    ]
    for e in entries:
        where = f"`{e['file']}` `[{e['scope']}]` **{e['model_class']}**"
        evidence = ", ".join(f"`{c}`" for c in e.get("evidence", ())) or "no cell listed"
        if e["action"] == "narrow":
            lines.append(f"- narrow {where} → {', '.join(f'`{s}`' for s in e.get('new_scopes', ()))}")
            lines.append(f"  - passing now: {evidence}")
            still = ", ".join(f"`{c}`" for c in e.get("still_failing", ()))
            if still:
                lines.append(f"  - still failing: {still}")
        else:
            lines.append(f"- remove {where}")
            lines.append(f"  - passing now: {evidence}")
    if run_url:
        lines += ["", f"Evidence from the sweep: {run_url}"]
    lines += ["", "This PR is kept up to date by `export-bot github obsolete-skips`; edits to it are overwritten."]
    return "\n".join(lines) + "\n"


def sync_pull_request(client: GitHubClient, files: dict[str, str], body: str, *, base: str = "main") -> str:
    """Bring the branch and its PR in line with `files` (path → text); returns what was done."""
    pull = client.find_open_pull(BRANCH, base)
    if not files:
        if pull is None:
            return "nothing to remove, no PR open"
        client.edit_pull(
            pull.number,
            state="closed",
            body=f"{MARKER}\nNothing is left to remove: the skips this PR removed are needed again "
            "or were removed on main.\n",
        )
        client.delete_branch(BRANCH)
        return f"closed #{pull.number}"
    base_sha = client.branch_sha(base)
    if base_sha is None:
        raise ValueError(f"branch {base} does not exist")
    sha = client.commit_files(base_sha, files, TITLE)
    # Always rebuilt on the current main: the branch holds one bot commit, never anyone's work.
    client.set_branch(BRANCH, sha, force=True)
    if pull is None:
        created = client.create_pull(BRANCH, base, TITLE, body)
        return f"opened #{created.number}"
    client.edit_pull(pull.number, title=TITLE, body=body)
    return f"updated #{pull.number}"


def current_report_json(client: GitHubClient, run_id: int, artifact: str) -> dict:
    """This sweep's report.json, from the artifact an earlier job of the same run uploaded."""
    from bot.publish.baseline import ArtifactError, read_json_member

    found = next((a for a in client.artifacts(run_id) if a.name == artifact), None)
    data = read_json_member(client.download(found)) if found else None
    if data is None:
        raise ArtifactError(f"run {run_id} has no {artifact} artifact with a report.json; pass --report")
    return data


def history_json(
    client: GitHubClient, workflow: str, artifact: str, *, branch: str, count: int, exclude_run: int
) -> list[dict]:
    """report.json of the last `count` successful sweeps on `branch` before this one, oldest first."""
    from bot.publish.baseline import ArtifactError, fetch_artifacts, read_json_member

    reports = []
    for fetched in fetch_artifacts(client, workflow, artifact, branch=branch, limit=count + 1):
        if fetched.run.id == exclude_run or len(reports) >= count:
            continue
        try:
            data = read_json_member(fetched.data)
        except ArtifactError as exc:
            log.warning("run %s: %s; left out of the history", fetched.run.id, exc)
            continue
        if data is not None:
            reports.append(data)
    return list(reversed(reports))


def obsolete_files(report, history, skiplists_dir: Path, *, min_passes: int, repo_folder: str = "skiplists"):
    """(edits, path → new text) of the removals and narrowings the probe history supports."""
    from bot.propose.edit import NARROW, REMOVE
    from bot.propose.proposal import Proposal, apply_proposal, propose

    if min_passes > 1 and not history:
        # `propose` lets a lone run decide (a PR's `/export-check probe`); on main K passes are needed.
        log.info("no earlier sweeps: a skip needs %d passing probes in a row before it is removed", min_passes)
        return (), {}
    full = propose(report, skiplists_dir, history=history, min_passes=min_passes)
    edits = tuple(e for e in full.entries if e.action in (REMOVE, NARROW))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "skiplists"
        shutil.copytree(skiplists_dir, work)
        written = apply_proposal(Proposal(entries=edits), work)
        files = {f"{repo_folder.strip('/')}/{p.name}": p.read_text(encoding="utf-8") for p in written}
    return edits, files
