"""The history-reading steps on a blobless clone (`filter: blob:none`), as actions/checkout makes it: same answers as a full clone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.select import changes
from tests.rehearsal.expressions import Evaluator
from tests.test_workflows import REUSABLE, load


def git(repo: Path, *args: str, env: dict | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})},
    )
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def origin(tmp_path) -> dict:
    """main with a merge and a long first-parent line, a side branch holding main's old tip (a force-push's `before`)."""
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    # A server that answers partial clones, as github.com does.
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    shas = {
        "root": commit(repo, {f"src/transformers/models/m{i}/modeling.py": f"x = {i}\n" for i in range(30)}, "root")
    }
    for i in range(12):
        shas[f"c{i}"] = commit(repo, {f"src/transformers/models/m{i}/modeling.py": f"x = {i} + 1\n"}, f"c{i}")
    git(repo, "checkout", "-q", "-b", "pr", shas["c5"])
    shas["pr"] = commit(repo, {"src/transformers/models/m20/modeling.py": "y = 2\n"}, "pr")
    git(repo, "checkout", "-q", "main")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "merge", "-q", "--no-ff", "-m", "merge", "pr")
    shas["merge"] = git(repo, "rev-parse", "HEAD")
    shas["after"] = commit(repo, {"src/transformers/models/m3/modeling.py": "x = 'after'\n"}, "after")
    # main's old tip, force-pushed away, still on a branch of the repository.
    git(repo, "checkout", "-q", "-b", "old-main", shas["c9"])
    shas["replaced"] = commit(repo, {"src/transformers/models/m9/modeling.py": "x = 'replaced'\n"}, "replaced")
    git(repo, "checkout", "-q", "main")
    return {"path": repo, **shas}


def checkout(origin: Path, target: Path, sha: str, *, filter: str | None) -> Path:
    """actions/checkout v4 with `fetch-depth: 0` (every branch and tag) and `filter` when set."""
    target.mkdir()
    git(target, "init", "-q")
    git(target, "remote", "add", "origin", f"file://{origin}")
    wanted = ["+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]
    git(
        target,
        "fetch",
        "-q",
        "--prune",
        "--no-recurse-submodules",
        *([f"--filter={filter}"] if filter else []),
        "origin",
        *wanted,
    )
    git(target, "checkout", "-q", "--force", sha)
    return target


def missing_blobs(repo: Path) -> int:
    listed = git(repo, "rev-list", "--objects", "--all", "--missing=print")
    return sum(line.startswith("?") for line in listed.splitlines())


def clones(origin: dict, tmp_path: Path, sha: str) -> tuple[Path, Path]:
    full = checkout(origin["path"], tmp_path / "full", sha, filter=None)
    blobless = checkout(origin["path"], tmp_path / "blobless", sha, filter="blob:none")
    assert missing_blobs(full) == 0 and missing_blobs(blobless) > 0, "the blobless clone fetched only HEAD's files"
    return full, blobless


def step_script(workflow: str, job: str, name: str) -> str:
    [step] = [s for s in load(REUSABLE / workflow)["jobs"][job]["steps"] if s.get("name") == name]
    return step["run"]


def run_pushed_commits(repo: Path, before: str, after: str, tmp_path: Path) -> str:
    """baseline.yml's plan step "The pushed commits", its script as the workflow holds it."""
    output = tmp_path / f"output-{repo.name}-{before[:7]}"
    output.touch()
    script = step_script("baseline.yml", "plan", "The pushed commits")
    env = {**os.environ, "BEFORE": before, "AFTER": after, "GITHUB_OUTPUT": str(output), "GIT_TERMINAL_PROMPT": "0"}
    subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=env, check=True, capture_output=True)
    return "\n".join(line for line in output.read_text().splitlines() if not line.startswith("time="))


@pytest.mark.parametrize("push", ["fast-forward", "merge", "force-push", "new-branch"])
def test_the_plans_pushed_commits_are_the_same_on_a_blobless_clone(origin, tmp_path, push):
    before = {
        "fast-forward": origin["c3"],
        "merge": origin["c11"],
        "force-push": origin["replaced"],
        "new-branch": "0" * 40,
    }[push]
    full, blobless = clones(origin, tmp_path, origin["after"])
    expected = run_pushed_commits(full, before, origin["after"], tmp_path)
    assert run_pushed_commits(blobless, before, origin["after"], tmp_path) == expected
    if push == "force-push":  # where the old tip and the new one meet, as a full clone finds it
        assert f"before={origin['c9']}" in expected


def test_selection_reads_the_same_changes_files_and_lines_on_a_blobless_clone(origin, tmp_path):
    """What `export-bot select --base B --head H` asks git (a push's range, a queue's commit on its base)."""
    full, blobless = clones(origin, tmp_path, origin["after"])
    base, head = origin["c3"], origin["after"]
    for read in (
        lambda repo: changes.changed_files(repo, base, head),
        lambda repo: changes.changed_lines(repo, base, head),
        lambda repo: changes.list_files(repo, base, "src/transformers/models"),
        lambda repo: changes.read_files(repo, base, ["src/transformers/models/m3/modeling.py"]),
        lambda repo: changes.grep(repo, base, "x =", ["src/transformers/models"], mode="fixed"),
    ):
        assert read(blobless) == read(full)


def test_a_bisect_step_checks_out_an_old_commit_of_a_blobless_clone(origin, tmp_path):
    from bot.jobs.bisect import _git

    _, blobless = clones(origin, tmp_path, origin["after"])
    folder = tmp_path / "step-1"
    assert _git(blobless, "worktree", "add", "--detach", "--force", "--end-of-options", str(folder), origin["c2"])
    assert (folder / "src/transformers/models/m2/modeling.py").read_text() == "x = 2 + 1\n"
    assert (folder / "src/transformers/models/m3/modeling.py").read_text() == "x = 3\n"


@pytest.mark.parametrize(
    "workflow, job, event",
    [
        ("baseline.yml", "plan", "push"),
        ("baseline.yml", "bisect", "schedule"),
        ("conformance.yml", "select", "merge_group"),
    ],
)
def test_the_full_history_checkouts_are_blobless_where_the_repository_is_public(workflow, job, event):
    """Every commit and tree, files fetched as a step reads them. Only a public repository's: with
    `persist-credentials: false`, those later fetches carry no token."""
    [checkout] = [
        s["with"]
        for s in load(REUSABLE / workflow)["jobs"][job]["steps"]
        if s.get("uses", "").startswith("actions/checkout@") and "repository" not in s.get("with", {})
    ]
    assert checkout["persist-credentials"] is False
    for visibility, expected in (("public", "blob:none"), ("private", ""), (None, "")):
        repository = {"visibility": visibility} if visibility else {}
        github = {"event_name": event, "event": {"repository": repository}, "sha": "a" * 40}
        rendered = Evaluator({"github": github, "inputs": {"pr": ""}}).render(checkout)
        assert (str(rendered["fetch-depth"]), rendered.get("filter", "")) == ("0", expected), visibility
