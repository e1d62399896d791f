"""Fixtures of the GitHub tests: the fake server (every response checked against the OpenAPI schema) and a CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.conftest import SKIPLISTS
from tests.github import openapi
from tests.github.fake_github import FakeGitHub
from tests.github.payloads import issue_comment_event

# Tiny waits: the retry logic is the same, the suite stays fast.
FAST = """[tool.export-bot]
github-retries = 4
github-backoff = 0.01
github-write-interval = 0
github-rate-limit-wait = 0.01
"""

WRITER, READER, MAINTAINER = "Codertocat", "octo-reader", "octo-maintainer"


@pytest.fixture
def fake():
    server = FakeGitHub().start()
    files = {f"skiplists/{p.name}": p.read_text(encoding="utf-8") for p in sorted(SKIPLISTS.glob("*.toml"))}
    main_sha = server.commit({"README.md": "hello\n", **files})
    server.state.refs["heads/main"] = main_sha
    server.state.refs["heads/feature"] = server.commit({"src/x.py": "x = 1\n"}, (main_sha,), "change")
    server.open_pull(1, "feature")
    server.state.permissions.update({WRITER: "admin", READER: "read", MAINTAINER: "maintain"})
    yield server
    server.stop()
    found = [p for sent in server.sent for p in openapi.problems(sent.template, sent.method, sent.status, sent.body)]
    assert not found, "responses that do not match GitHub's OpenAPI description:\n" + "\n".join(found[:20])


# The default branch's model sources beside its pyproject, as the command job checks it out: the
# names a command may use come from them, read as text (that job installs no transformers).
CHECKOUT_MODELS = {
    "bert/modeling_bert.py": """class BertPreTrainedModel(PreTrainedModel):
    config: BertConfig


class BertModel(BertPreTrainedModel):
    def forward(self, input_ids):
        return input_ids


__all__ = ["BertModel", "BertPreTrainedModel"]
""",
    "llama/modeling_llama.py": """class LlamaPreTrainedModel(PreTrainedModel):
    config: LlamaConfig


class LlamaModel(LlamaPreTrainedModel):
    def forward(self, input_ids):
        return input_ids


class LlamaForCausalLM(LlamaPreTrainedModel, GenerationMixin):
    def forward(self, input_ids):
        return input_ids


__all__ = ["LlamaForCausalLM", "LlamaModel", "LlamaPreTrainedModel"]
""",
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(FAST, encoding="utf-8")
    for name, text in CHECKOUT_MODELS.items():
        module = tmp_path / "src/transformers/models" / name
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def gh(fake, config, tmp_path, monkeypatch):
    """Run `export-bot github …` in-process with the Actions environment pointed at the fake."""
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.touch()
    output.touch()

    def run(*args: str, event: dict | None = None, env: dict | None = None):
        environment = {
            "GITHUB_REPOSITORY": fake.full_name,
            "GITHUB_TOKEN": fake.token,
            "GITHUB_API_URL": fake.url,
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_RUN_ID": "1",
        }
        if event is not None:
            path = tmp_path / "event.json"
            path.write_text(json.dumps(event), encoding="utf-8")
            environment["GITHUB_EVENT_PATH"] = str(path)
        environment.update(env or {})
        for key, value in environment.items():
            monkeypatch.setenv(key, value)
        return CliRunner().invoke(main, ["github", "--config", str(config), *args], catch_exceptions=False)

    run.summary, run.output = summary, output
    return run


def outputs(path: Path) -> dict[str, str]:
    """`$GITHUB_OUTPUT` heredoc entries → values."""
    lines, found, i = path.read_text(encoding="utf-8").splitlines(), {}, 0
    while i < len(lines):
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        found[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return found


ONE_CELL = (("BertModel::test_onnx_export_static", "passed", False),)


def make_report(*, head_sha: str, verdict: str = "success", headline: str = "all good", cells=ONE_CELL, proposal=None):
    """A report as the report job writes it; one passing cell by default (a report of no cell posts no comment)."""
    from bot.diff.model import CellLine, Report
    from bot.diff.proposal import Proposal

    lines = tuple(CellLine(cell, status, probe=probe) for cell, status, probe in cells)
    return Report(
        verdict=verdict,
        headline=headline,
        baseline=True,
        head_sha=head_sha,
        base_sha="b" * 40,
        cells=lines,
        proposal=None if proposal is None else Proposal.from_json(proposal),
        run_url="https://github.com/Codertocat/Hello-World/actions/runs/7",
    )


def zipped(files: dict[str, str]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def report_zip(report) -> bytes:
    return zipped({"report.json": json.dumps(report.to_json())})


# What a conformance run on the PR proposes: remove GroundingDino's dynamic ONNX skip, which its cell passed.
ENTRY = {
    "action": "remove",
    "file": "export_skips.toml",
    "scope": "onnx.dynamic",
    "model_class": "MMGroundingDinoForObjectDetection",
    "evidence": ["MMGroundingDinoForObjectDetection::test_onnx_export_dynamic"],
}


def comment_event(fake, body: str, author: str = WRITER, *, number: int = 1, **kw) -> dict:
    """`author` comments `body` on PR `number` (comment 500, kept by the fake); the issue_comment event of it."""
    fake.state.comments[500] = {"issue": number, "body": body, "user": author, "created": "2026-01-01T00:00:00Z"}
    user = fake.user_obj(author) if author != "dependabot[bot]" else dict(fake.user_obj(author), type="Bot")
    return issue_comment_event(repo=fake.repo, number=number, comment_id=500, body=body, author=user, **kw)


def add_pr_report(fake, report, *, branch: str = "feature", head_repo: str | None = None) -> int:
    """The conformance workflow's run on a PR's head, `report` uploaded as its `export-report` artifact."""
    return fake.add_run(
        "export-conformance.yml",
        head_sha=report.head_sha,
        branch=branch,
        event="pull_request",
        head_repo=head_repo,
        artifacts={"export-report": report_zip(report)},
    )


def propose_on_feature(fake, proposal: dict | None = None) -> str:
    """PR 1's head, with a conformance run on it whose report proposes `proposal` (ENTRY by default)."""
    head = fake.state.refs["heads/feature"]
    add_pr_report(
        fake, make_report(head_sha=head, proposal={"entries": [ENTRY], "patch": "…"} if proposal is None else proposal)
    )
    return head
