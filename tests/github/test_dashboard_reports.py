"""`export-bot github reports`: the earlier baseline sweeps' reports, fetched for the dashboard's history."""

from __future__ import annotations

import json

from bot.site import load_runs
from bot.site.data import ordered
from tests.github.conftest import make_report, report_zip

CELL = "BertModel::test_onnx_export_static"


def test_earlier_sweeps_oldest_first_without_this_run(fake, gh, tmp_path):
    main = fake.state.refs["heads/main"]
    shas = []
    for n, status in enumerate(("passed", "failed", "passed", "failed")):
        sha = f"{n + 1}" * 40
        shas.append(sha)
        conclusion = "failure" if n == 2 else "success"  # a later job failed: its sweep still counts
        fake.add_run(
            "export-baseline.yml",
            head_sha=main,
            conclusion=conclusion,
            event="schedule",  # sweeps are nightly (or dispatched) runs
            artifacts={"export-baseline": report_zip(make_report(head_sha=sha, cells=[(CELL, status, False)]))},
        )
    this_run = fake.add_run("export-baseline.yml", head_sha=main, artifacts={"export-baseline": b"not a zip"})
    out = tmp_path / "history"
    result = gh("reports", "--count", "2", "--out", str(out), env={"GITHUB_RUN_ID": str(this_run)})
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"2 earlier export-baseline.yml reports in {out}"
    folders = sorted(p.name for p in out.iterdir())
    assert folders == ["sweep-000", "sweep-001"]
    got = [json.loads((out / f / "report.json").read_text(encoding="utf-8"))["head_sha"] for f in folders]
    assert got == [shas[2], shas[3]]  # the newest two sweeps that uploaded the artifact, oldest first
    # The dashboard reads them in that order (they carry no `created`).
    assert [run.report.head_sha for run in ordered(load_runs([out]))] == got


def test_a_flood_of_fork_runs_named_main_leaves_the_history_to_main_s_sweeps(fake, gh, tmp_path):
    main = fake.state.refs["heads/main"]
    sweep = make_report(head_sha="1" * 40, cells=[(CELL, "passed", False)])
    fake.add_run(
        "export-baseline.yml", head_sha=main, event="schedule", artifacts={"export-baseline": report_zip(sweep)}
    )
    for _ in range(70):
        forged = make_report(head_sha="f" * 40, cells=[(CELL, "failed", False)])
        fake.add_run(
            "export-baseline.yml",
            head_sha="f" * 40,
            event="pull_request",
            head_repo="mallory/transformers",
            artifacts={"export-baseline": report_zip(forged)},
        )
    this_run = fake.add_run("export-baseline.yml", head_sha=main)  # the sweep whose dashboard this is
    out = tmp_path / "history"
    result = gh("reports", "--count", "2", "--out", str(out), env={"GITHUB_RUN_ID": str(this_run)})
    assert result.exit_code == 0, result.output
    got = [json.loads((p / "report.json").read_text(encoding="utf-8"))["head_sha"] for p in sorted(out.iterdir())]
    assert got == ["1" * 40]
