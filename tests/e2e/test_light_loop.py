"""The light half of the loop without exports: hand-written JUnit → diff → propose → comment → apply → green."""

from __future__ import annotations

import shutil

from bot.diff.model import load_report
from bot.report import COMMENT_MARKER
from tests.conftest import SKIPLISTS
from tests.e2e.conftest import PR, apply_comment, artifact
from tests.github.payloads import pull_request_event

CELLS = [f"ToyModel::test_{fn}_export_{shape}" for fn in ("torch", "onnx") for shape in ("static", "dynamic")]
FAILURE = (
    '<properties><property name="stage" value="export"/></properties>'
    '<failure message="TypeError: unhashable type: non-nested SymInt">Traceback …</failure>'
)


def junit(failing: set[str] = frozenset()) -> str:
    cases = "".join(
        f'<testcase classname="{c.split("::")[0]}" name="{c.split("::")[1]}" time="1.0">'
        f"{FAILURE if c in failing else ''}</testcase>"
        for c in CELLS
    )
    return f'<?xml version="1.0"?><testsuites><testsuite name="export-bot" tests="4">{cases}</testsuite></testsuites>'


def test_diff_propose_comment_apply_on_a_junit_pair(tmp_path, fake, bot):
    dynamic = {c for c in CELLS if c.endswith("dynamic")}
    (tmp_path / "base.xml").write_text(junit(), encoding="utf-8")
    (tmp_path / "head.xml").write_text(junit(dynamic), encoding="utf-8")
    skiplists = tmp_path / "skiplists"
    shutil.copytree(SKIPLISTS, skiplists)
    files = {f"skiplists/{p.name}": p.read_text(encoding="utf-8") for p in sorted(skiplists.glob("*.toml"))}
    fake.state.refs["heads/main"] = main = fake.commit(files)
    fake.state.refs["heads/pr"] = head = fake.commit({"src/transformers/models/toy/modeling_toy.py": "…"}, (main,))
    fake.open_pull(PR, "pr")

    def diff_and_propose(name: str, sha: str):
        diffed = bot(
            "diff",
            "--base",
            "base.xml",
            "--head",
            "head.xml",
            "--skiplists",
            str(skiplists),
            "--head-sha",
            sha,
            "--json",
            name,
            cwd=tmp_path,
        )
        assert (
            bot("propose", "--report", name, "--skiplists", str(skiplists), "--write-report", cwd=tmp_path).exit_code
            == 0
        )
        return diffed.exit_code, load_report(tmp_path / name)

    code, report = diff_and_propose("report.json", head)
    assert (code, report.verdict) == (1, "failure") and {
        line.cell for line in report.category("newly_broken")
    } == dynamic
    [entry] = report.proposal.to_json()["entries"]
    assert (entry["scope"], entry["model_class"]) == ("dynamic", "ToyModel")
    opened = pull_request_event("opened", repo=fake.repo, number=PR, head_sha=head)
    assert bot("comment", "--report", "report.json", cwd=tmp_path, fake=fake, event=opened).exit_code == 0
    assert fake.state.statuses[head][-1]["state"] == "failure"

    fake.add_run(
        "export-conformance.yml",
        head_sha=head,
        branch="pr",
        artifacts={"export-report": artifact(tmp_path / "report.json")},
    )
    _, event = apply_comment(fake)
    assert bot("apply", cwd=tmp_path, fake=fake, event=event, run_id=2).exit_code == 0
    new_head = fake.state.refs["heads/pr"]
    (skiplists / "export_skips.toml").write_text(
        fake.files_at(new_head)["skiplists/export_skips.toml"], encoding="utf-8"
    )

    code, report = diff_and_propose("report-2.json", new_head)
    assert (code, report.verdict, report.proposal.to_json()["entries"]) == (0, "success", [])
    assert (
        bot("comment", "--report", "report-2.json", "--pr", str(PR), cwd=tmp_path, fake=fake, run_id=3).exit_code == 0
    )
    stickies = [c["body"] for c in fake.bot_comments(PR) if c["body"].startswith(COMMENT_MARKER)]
    assert (
        len(stickies) == 1 and "**success**" in stickies[0] and fake.state.statuses[new_head][-1]["state"] == "success"
    )
