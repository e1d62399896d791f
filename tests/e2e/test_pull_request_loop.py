"""The whole loop on a real git repository and real exports: a PR breaks dynamic shapes, the bot says so, `apply` makes it green."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.diff.model import load_report
from bot.outcomes import Status
from bot.report import COMMENT_MARKER
from bot.results import read_results
from tests.e2e.checkout import MODELING, commit_all, git, make_toy_repo
from tests.e2e.conftest import PR, apply_comment, artifact, files_of, mirror
from tests.github.fake_github import BOT
from tests.github.payloads import pull_request_event, workflow_run_event

BACKENDS = ("dynamo", "onnx")
CELLS = {f"ToyModel::test_{fn}_export_{shape}" for fn in ("torch", "onnx") for shape in ("static", "dynamic")}
DYNAMIC = {cell for cell in CELLS if cell.endswith("_dynamic")}
SKIPS = "skiplists/export_skips.toml"


def start_run(cwd: Path, junit: Path, *args: str) -> subprocess.Popen:
    """`export-bot run` as a shard job runs it (in-process pytest: one import of the stack, 2 busy cores)."""
    command = [sys.executable, "-m", "bot", "run", "-n", "0", "--junit", str(junit), *args]
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(run: subprocess.Popen) -> None:
    output, _ = run.communicate(timeout=600)
    assert run.returncode == 0, output[-4000:]


def statuses(junit: Path) -> dict[str, object]:
    results = read_results([junit])
    assert results.complete, results.problems
    return {cell.id: result for cell, result in results.results.items()}


def stickies(fake) -> dict[int, str]:
    """The bot's sticky comments on the PR (its other replies, e.g. to `apply`, carry no marker): id → body."""
    return {
        i: c["body"]
        for i, c in sorted(fake.state.comments.items())
        if c["issue"] == PR and c["user"] == BOT and c["body"].startswith(COMMENT_MARKER)
    }


def only_backends(selection: Path, backends: tuple[str, ...]) -> None:
    # Workaround: `export-bot run --selection` ignores `--backends`, and the selection has all four.
    document = json.loads(selection.read_text(encoding="utf-8"))
    fns = tuple("torch" if b == "dynamo" else b for b in backends)
    document["cells"] = [c for c in document["cells"] if c.split("::test_")[1].startswith(fns)]
    selection.write_text(json.dumps(document), encoding="utf-8")


@pytest.mark.export
@pytest.mark.timeout(900)
def test_a_pr_breaking_dynamic_shapes_is_reported_then_applied_and_green(tmp_path, fake, bot):
    repo, out = tmp_path / "transformers", tmp_path / "out"
    base_sha, head_sha = make_toy_repo(repo)
    out.mkdir()
    # Main's baseline comes from its own job on its own checkout; it runs while the PR is selected and run.
    main_checkout = tmp_path / "transformers-main"
    git(repo, "worktree", "add", "-q", str(main_checkout), "main")
    base_run = start_run(
        main_checkout,
        out / "base.xml",
        "--source",
        f"transformers-tests:{main_checkout}",
        "--models",
        "ToyModel",
        "--backends",
        ",".join(BACKENDS),
    )

    # The PR as GitHub has it: main and the PR branch pushed, PR #7 open, head = the PR commit.
    mirror(fake, files_of(repo, base_sha), base_sha)
    mirror(fake, files_of(repo, head_sha), head_sha, (base_sha,))
    fake.state.refs.update({"heads/main": base_sha, "heads/pr": head_sha})
    fake.open_pull(PR, "pr", title="Toy: memoise the output scale per sequence length")
    opened = pull_request_event("opened", repo=fake.repo, number=PR, head_sha=head_sha)

    # select: only modeling_toy.py changed, so ToyModel's row and nothing else.
    selected = bot(
        "select", "--repo", str(repo), "--base", "main", "--head", "pr", "--json", str(out / "selection.json"), cwd=repo
    )
    assert selected.exit_code == 0, selected.output
    selection = json.loads(selected.stdout)
    assert selection["head_sha"] == head_sha and selection["base_sha"] == base_sha
    assert selection["classes"] == {"ToyModel": [{"kind": "changed", "detail": MODELING}]}
    assert CELLS <= set(selection["cells"]) and {c.split("::")[0] for c in selection["cells"]} == {"ToyModel"}
    only_backends(out / "selection.json", BACKENDS)

    # run the selection on the PR checkout (the model source comes from its [tool.export-bot]).
    finish(start_run(repo, out / "head.xml", "--selection", str(out / "selection.json")))
    finish(base_run)
    base, head = statuses(out / "base.xml"), statuses(out / "head.xml")
    assert {c: r.status for c, r in base.items()} == {c: Status.PASSED for c in CELLS}
    assert {c: r.status for c, r in head.items()} == {
        c: Status.FAILED if c in DYNAMIC else Status.PASSED for c in CELLS
    }
    for cell in DYNAMIC:
        assert head[cell].stage == "export" and head[cell].message.startswith("TypeError: unhashable type"), head[cell]
    assert read_results([out / "head.xml"]).git_sha == head_sha and read_results([out / "base.xml"]).git_sha == base_sha

    # diff: the dynamic cells are newly broken and nothing covers them.
    report_path = out / "report.json"
    diffed = bot(
        "diff", "--base", str(out / "base.xml"), "--head", str(out / "head.xml"), "--json", str(report_path), cwd=repo
    )
    assert diffed.exit_code == 1, diffed.output
    report = load_report(report_path)
    assert report.verdict == "failure" and report.baseline
    assert {line.cell for line in report.category("newly_broken")} == DYNAMIC
    assert (report.base_sha, report.head_sha) == (base_sha, head_sha)

    # propose: one `dynamic` entry for ToyModel, stored in the report for the comment and `apply`.
    proposed = bot("propose", "--report", str(report_path), "--write-report", cwd=repo)
    assert proposed.exit_code == 0, proposed.output
    [entry] = load_report(report_path).proposal.to_json()["entries"]
    assert (entry["action"], entry["scope"], entry["model_class"]) == ("add", "dynamic", "ToyModel")
    assert set(entry["evidence"]) == DYNAMIC
    patch = load_report(report_path).proposal.to_json()["patch"]
    assert "+ToyModel = " in patch

    # comment: one sticky comment naming the broken cells with the patch, and a failure status on the head.
    commented = bot("comment", "--report", str(report_path), cwd=repo, fake=fake, event=opened, run_id=1)
    assert commented.exit_code == 0, commented.output
    [(sticky_id, body)] = stickies(fake).items()
    assert "**failure**" in body
    assert all(cell in body for cell in DYNAMIC) and "```diff" in body
    assert next(line for line in patch.splitlines() if line.startswith("+ToyModel")) in body
    assert [(s["context"], s["state"]) for s in fake.state.statuses[head_sha]] == [("export-conformance", "failure")]

    # The conformance workflow uploads report.json; `/export-check apply` by a writer commits its proposal.
    fake.add_run(
        "export-conformance.yml",
        head_sha=head_sha,
        branch="pr",
        event="pull_request",
        artifacts={"export-report": artifact(report_path)},
    )
    comment_id, applying = apply_comment(fake)
    for step in (
        ("command", "--dispatch", "export-conformance.yml"),
        ("apply", "--dispatch", "export-conformance.yml"),
    ):
        result = bot(*step, cwd=repo, fake=fake, event=applying, run_id=2)
        assert result.exit_code == 0, result.output
    new_head = fake.state.refs["heads/pr"]
    assert fake.state.commits[new_head]["parents"] == [head_sha]
    applied = fake.files_at(new_head)
    assert applied[SKIPS] != fake.files_at(head_sha)[SKIPS] and "\nToyModel = " in applied[SKIPS]
    assert {p: t for p, t in applied.items() if p != SKIPS} == {
        p: t for p, t in fake.files_at(head_sha).items() if p != SKIPS
    }
    assert fake.state.reactions[comment_id] == ["eyes", "rocket"]
    assert fake.state.dispatches[-1]["inputs"]["sha"] == new_head

    # The dispatched re-run checks out the new head: its skiplists now cover the dynamic cells.
    (repo / SKIPS).write_text(applied[SKIPS], encoding="utf-8")
    commit_all(repo, "Apply export-bot's proposed skiplist edits")
    # Selection as the dispatched run makes it: the pinned request, the shard matrix on $GITHUB_OUTPUT.
    request, outputs = fake.state.dispatches[-1]["inputs"]["request"], out / "github-output.txt"
    reselected = bot(
        "select",
        "--repo",
        str(repo),
        "--base",
        "main",
        "--head",
        "pr",
        "--request",
        request,
        "--json",
        str(out / "selection-2.json"),
        "--github-output",
        str(outputs),
        cwd=repo,
    )
    assert reselected.exit_code == 0, reselected.output
    assert {r["kind"] for r in json.loads(reselected.stdout)["classes"]["ToyModel"]} == {"changed", "skiplist"}
    assert "count=8\n" in outputs.read_text(encoding="utf-8")
    only_backends(out / "selection-2.json", BACKENDS)
    finish(start_run(repo, out / "head-2.xml", "--selection", str(out / "selection-2.json")))
    rerun = statuses(out / "head-2.xml")
    assert {c: r.status for c, r in rerun.items()} == {
        c: Status.SKIPPED if c in DYNAMIC else Status.PASSED for c in CELLS
    }
    assert {rerun[c].skip_scope for c in DYNAMIC} == {"dynamic"}

    report_2 = out / "report-2.json"
    rediffed = bot(
        "diff",
        "--base",
        str(out / "base.xml"),
        "--head",
        str(out / "head-2.xml"),
        "--json",
        str(report_2),
        "--base-sha",
        base_sha,
        "--head-sha",
        new_head,
        cwd=repo,
    )
    assert rediffed.exit_code == 0, rediffed.output
    assert bot("propose", "--report", str(report_2), "--write-report", cwd=repo).exit_code == 0
    green = load_report(report_2)
    assert green.verdict == "success" and not green.category("newly_broken")
    assert not green.proposal.to_json()["entries"]  # idempotent: nothing more to propose

    # The comment job of the dispatched run: its event names main's SHA and no PR, the report names the head.
    dispatched = workflow_run_event(repo=fake.repo, run_id=3, head_sha=base_sha, pr_numbers=[], head_branch="main")
    # Its title, export-conformance.yml's run-name, names the PR (and the command's comment).
    dispatched["workflow_run"].update(
        event="workflow_dispatch", display_title=f"export-conformance #{PR}: /export-check rerun (comment {comment_id})"
    )
    recommented = bot("comment", "--report", str(report_2), cwd=repo, fake=fake, event=dispatched, run_id=3)
    assert recommented.exit_code == 0, recommented.output
    [(updated_id, updated)] = stickies(fake).items()
    assert updated_id == sticky_id and "**success**" in updated
    assert "Newly broken" not in updated and "```diff" not in updated
    assert [s["state"] for s in fake.state.statuses[new_head]] == ["success"]
