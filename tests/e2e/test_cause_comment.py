"""A PR adds a data-dependent branch to a tiny model: real exports on torch.export and ONNX, one cause in the comment.

The comment must show one group of the four cells, the culprit `path:line` the PR changed, the
data-dependent-guard hint, and a repro command that, run as printed, fails the same way. The
comment is compared with tests/report/golden/comment_data_dependent_guard.md (head SHA and
versions masked), the golden tests/report/test_causes.py renders from this run's recorded JUnit;
`UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/e2e/test_cause_comment.py` rewrites both inputs.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bot.diff.groups import group_key
from bot.diff.model import load_report
from bot.outcomes import Status
from bot.report import render_comment
from bot.results import read_results
from tests.e2e.checkout import HERE, MODELING, commit_all, git, make_toy_repo, write
from tests.report.test_causes import GOLDEN, JUNIT, REPOSITORY, SELECTION, masked
from tests.report.test_render import check_golden

CELLS = {f"ToyModel::test_{fn}_export_{shape}" for fn in ("torch", "onnx") for shape in ("static", "dynamic")}


def make_guard_branch(repo: Path) -> tuple[str, str]:
    """`guard` off main: the toy model's forward gains `if int(input_ids.max()) < 0:`; returns (base, head) SHAs."""
    base, _ = make_toy_repo(repo)
    git(repo, "checkout", "-q", "-b", "guard", base)
    write(repo / MODELING, (HERE / "guard" / "modeling_toy.py").read_text(encoding="utf-8"))
    return base, commit_all(repo, "Toy: take the absolute value of negative ids")


def export_bot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.export
@pytest.mark.timeout(900)
def test_a_data_dependent_branch_is_one_cause_pointing_at_the_pr_line(tmp_path, bot, monkeypatch):
    repo, out = tmp_path / "transformers", tmp_path / "out"
    out.mkdir()
    base_sha, head_sha = make_guard_branch(repo)
    guard_line = 1 + (HERE / "guard" / "modeling_toy.py").read_text().splitlines().index(
        "        if int(input_ids.max()) < 0:"
    )

    # select writes the PR's hunks into the selection; keep the torch.export and ONNX cells.
    selection = out / "selection.json"
    selected = bot(
        "select", "--repo", str(repo), "--base", "main", "--head", "guard", "--json", str(selection), cwd=repo
    )
    assert selected.exit_code == 0, selected.output
    document = json.loads(selection.read_text(encoding="utf-8"))
    assert any(a <= guard_line <= b for a, b in document["changed_lines"][MODELING])
    document["cells"] = [c for c in document["cells"] if c in CELLS]
    assert set(document["cells"]) == CELLS
    selection.write_text(json.dumps(document), encoding="utf-8")

    ran = export_bot(repo, "run", "-n", "0", "--selection", str(selection), "--junit", str(out / "head.xml"))
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    if os.environ.get("UPDATE_GOLDEN"):
        JUNIT.write_text((out / "head.xml").read_text(encoding="utf-8"), encoding="utf-8")
        SELECTION.write_text(selection.read_text(encoding="utf-8"), encoding="utf-8")

    # diff (no baseline: the four cells are new failing) and propose, as the report job runs them.
    monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    report_path = out / "report.json"
    diffed = bot(
        "diff", "--head", str(out / "head.xml"), "--selection", str(selection), "--json", str(report_path), cwd=repo
    )  # noqa: E501
    assert diffed.exit_code == 1, diffed.output
    proposed = bot("propose", "--report", str(report_path), "--write-report", cwd=repo)
    assert proposed.exit_code == 0, proposed.output
    report = load_report(report_path)

    [group] = report.groups
    assert set(group.cells) == CELLS and group.stage == "export"
    assert (group.culprit.path, group.culprit.line, group.culprit.changed) == (MODELING, guard_line, True)
    assert group.culprit.source == "if int(input_ids.max()) < 0:"
    assert group.culprit.url == f"https://github.com/{REPOSITORY}/blob/{head_sha}/{MODELING}#L{guard_line}"
    assert group.hint is not None and group.hint.id == "data-dependent-guard"
    [entry] = report.proposal.to_json()["entries"]
    assert entry["reason"].startswith(f"Torch and ONNX exports fail at stage `export` in `{MODELING}:{guard_line}`: ")
    comment = render_comment(report)
    assert f"{MODELING}:{guard_line}`]" in comment and "**changed in this PR**" in comment
    check_golden(GOLDEN, masked(comment, head_sha))

    # The repro line, run as printed from the checkout's root, fails the same way.
    args = shlex.split(group.repro)
    assert args[:2] == ["export-bot", "run"]
    repro_junit = out / "repro.xml"
    again = export_bot(repo, *args[1:], "-n", "0", "--junit", str(repro_junit))
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    results = read_results([repro_junit]).results
    [cell] = [c for c in results if c.id == group.representative]
    assert results[cell].status is Status.FAILED
    assert group_key(results[cell]) == (group.stage, group.signature)
    assert base_sha != head_sha
