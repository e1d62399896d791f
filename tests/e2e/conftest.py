"""Fixtures of the end-to-end tests: the GitHub-shaped server and the `export-bot` light commands in-process."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.e2e.checkout import git
from tests.github import openapi
from tests.github.fake_github import FakeGitHub
from tests.github.payloads import issue_comment_event

# `toy_checkout/` holds the files of the test repository (its own test_modeling_toy.py), not tests to collect.
collect_ignore = ["toy_checkout"]

# Tiny waits: the fake answers at once and injects no faults here.
FAST = """[tool.export-bot]
github-retries = 2
github-backoff = 0.01
github-write-interval = 0
"""
WRITER = "Codertocat"
PR = 7


@pytest.fixture
def fake():
    """The fake GitHub; every response it sent must validate against GitHub's OpenAPI description."""
    server = FakeGitHub().start()
    server.state.permissions[WRITER] = "write"
    yield server
    server.stop()
    found = [p for sent in server.sent for p in openapi.problems(sent.template, sent.method, sent.status, sent.body)]
    assert not found, "responses that do not match GitHub's OpenAPI description:\n" + "\n".join(found[:20])


def mirror(fake: FakeGitHub, files: dict[str, str], sha: str, parents: tuple[str, ...] = ()) -> str:
    """Store a commit with these files under `sha` (a real git SHA), as if it had been pushed."""
    stored = fake.commit(files, message=f"mirror of {sha[:12]}")
    fake.state.commits[sha] = dict(fake.state.commits.pop(stored), parents=list(parents))
    return sha


def files_of(repo: Path, sha: str) -> dict[str, str]:
    paths = git(repo, "ls-tree", "-r", "--name-only", sha).splitlines()
    return {path: git(repo, "show", f"{sha}:{path}", strip=False) for path in paths}


def artifact(report_path: Path) -> bytes:
    """The `export-report` artifact the conformance workflow uploads: a zip holding report.json."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("report.json", report_path.read_text(encoding="utf-8"))
    return buffer.getvalue()


def apply_comment(fake: FakeGitHub) -> tuple[int, dict]:
    """A writer's `/export-check apply` on the PR: the comment's id, and the issue_comment event of it."""
    comment_id = fake.new_id()
    fake.state.comments[comment_id] = {
        "issue": PR,
        "body": "/export-check apply",
        "user": WRITER,
        "created": "2026-11-29T12:00:00Z",
    }
    event = issue_comment_event(
        repo=fake.repo, number=PR, comment_id=comment_id, body="/export-check apply", author=fake.user_obj(WRITER)
    )
    return comment_id, event


@pytest.fixture
def bot(tmp_path, monkeypatch):
    """`bot(*args, cwd=…, event=…, run_id=…)`: one light `export-bot` command in-process, as a workflow step runs it."""
    config = tmp_path / "github-config.toml"
    config.write_text(FAST, encoding="utf-8")

    def invoke(*args: str, cwd: Path, fake: FakeGitHub | None = None, event: dict | None = None, run_id: int = 1):
        monkeypatch.chdir(cwd)
        if fake is not None:
            env = {
                "GITHUB_REPOSITORY": fake.full_name,
                "GITHUB_TOKEN": fake.token,
                "GITHUB_API_URL": fake.url,
                "GITHUB_RUN_ID": str(run_id),
                "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
                "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            }
            if event is not None:
                path = tmp_path / f"event-{run_id}-{args[0]}.json"
                path.write_text(json.dumps(event), encoding="utf-8")
                env["GITHUB_EVENT_PATH"] = str(path)
            for key, value in env.items():
                monkeypatch.setenv(key, value)
            args = ("github", "--config", str(config), *args)
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke
