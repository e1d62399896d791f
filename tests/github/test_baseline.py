"""`export-bot github baseline`: main's state folded from the newest state artifacts and the measurements not yet in them."""

from __future__ import annotations

import json

import pytest

from bot.publish.baseline import ArtifactError, extract
from bot.results import read_results
from bot.results.baseline import Segment, chain, fold, measured
from bot.results.baseline_json import dumps, read_state
from tests.github.conftest import outputs, zipped
from tests.results.factory import Case, junit

BERT = "BertModel::test_onnx_export_static"
GPT2 = "GPT2Model::test_torch_export_static"
LLAMA = "LlamaModel::test_torch_export_dynamic"


def sha(n: int) -> str:
    return f"{n:x}" * 40 if n < 16 else f"{n:040x}"


def measurement(tmp_path, cases, *, commit, parent, run_id, time="2026-12-01T00:00:00Z"):
    """One push's measurement, from real JUnit text read by the real reader."""
    path = tmp_path / f"junit-{run_id}-{commit[:4]}.xml"
    path.write_text(junit(cases), encoding="utf-8")
    return measured(
        read_results([path]),
        commit=commit,
        time=time,
        run_id=run_id,
        source="push",
        segment=Segment(parent, (commit,), run_id),
    )


def push_run(fake, commit: str, **kwargs) -> int:
    return fake.add_run("export-baseline.yml", head_sha=commit, **kwargs)


def test_version_1_artifacts_are_converted_at_the_commit_github_records_whatever_the_conclusion(fake, gh, tmp_path):
    # Today's artifact: a folder of sweep JUnit. Its git_sha property says "abc123" (the runner's
    # checkout); the commit used is the run's head SHA from GitHub's record.
    for n, conclusion, status in ((1, "success", "passed"), (2, "success", "failed"), (3, "failure", "passed")):
        xml = junit([Case(BERT, status=status, message="boom", stage="export")], shard="1/1")
        fake.add_run(
            "export-baseline.yml",
            head_sha=sha(n),
            conclusion=conclusion,
            artifacts={"export-baseline": zipped({"baseline/baseline-1.xml": xml, "baseline/report.json": "{}"})},
        )
    other = junit([Case(GPT2)])
    fake.add_run(
        "export-baseline.yml", head_sha=sha(4), branch="other", artifacts={"export-baseline": zipped({"b.xml": other})}
    )
    out = tmp_path / "base"
    result = gh("baseline", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert outputs(gh.output) == {"found": "true", "sha": sha(3)}
    assert "version-1 baseline(s)" in result.output
    state = read_state(out / "baseline.json")
    assert list(out.iterdir()) == [out / "baseline.json"]
    assert chain(state) == (sha(1), sha(2), sha(3))
    history = state.cells[next(iter(state.cells))]
    assert [(m.commit, m.result.status.value, m.source) for m in history] == [
        (sha(3), "passed", "sweep"),
        (sha(2), "failed", "sweep"),
        (sha(1), "passed", "sweep"),
    ]
    assert [c.id for c in state.cells] == [BERT]  # the other branch's run is no baseline
    assert len(state.full_sweeps) == 3


def test_no_baseline_yet_is_not_an_error_and_writes_nothing(fake, gh, tmp_path):
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0 and "no baseline yet" in result.output
    assert outputs(gh.output) == {"found": "false"}
    assert not (tmp_path / "base").exists()  # `report --base base` then judges without a baseline


def test_the_newest_three_states_are_folded_with_every_measurement_none_of_them_holds(fake, gh, tmp_path):
    # Push A merged; push B's merge job was replaced while pending (its measurement stands alone);
    # push C merged before B's measurement was uploaded. Nothing B measured may be lost.
    a, b, c = (push_run(fake, sha(n), status="in_progress") for n in (1, 2, 3))
    m_a = measurement(tmp_path, [Case(BERT)], commit=sha(1), parent=sha(15), run_id=a)
    m_b = measurement(
        tmp_path, [Case(GPT2, status="failed", stage="export", message="x")], commit=sha(2), parent=sha(1), run_id=b
    )
    m_c = measurement(tmp_path, [Case(LLAMA)], commit=sha(3), parent=sha(2), run_id=c)
    s_a, s_c = fold(m_a), fold(m_a, m_c)
    fake.add_artifact(a, "export-measurement", zipped({"measurement.json": dumps(m_a)}))
    fake.add_artifact(a, "export-baseline", zipped({"baseline.json": dumps(s_a)}))
    fake.add_artifact(b, "export-measurement", zipped({"measurement.json": dumps(m_b)}))
    fake.add_artifact(c, "export-measurement", zipped({"measurement.json": dumps(m_c)}))
    fake.add_artifact(c, "export-baseline", zipped({"nested/baseline.json": dumps(s_c)}))
    out = tmp_path / "base"
    result = gh("baseline", "--out", str(out))
    assert result.exit_code == 0, result.output
    state = read_state(out / "baseline.json")
    assert state == fold(s_a, s_c, m_b)
    assert state.runs == {a, b, c} and chain(state) == (sha(15), sha(1), sha(2), sha(3))
    assert "2 state(s)" in result.output and "1 measurement(s) not yet in them" in result.output
    assert outputs(gh.output) == {"found": "true", "sha": sha(3)}
    # Measurements the states already hold are not downloaded again.
    downloads = [path for method, path in fake.requests if path.endswith("/zip")]
    assert len(downloads) == 3


def test_a_forks_run_on_a_branch_it_named_main_and_a_measurement_speaking_for_another_run_are_passed_over(
    fake, gh, tmp_path
):
    own = push_run(fake, sha(1))
    fake.add_artifact(
        own,
        "export-baseline",
        zipped(
            {"baseline.json": dumps(fold(measurement(tmp_path, [Case(BERT)], commit=sha(1), parent=None, run_id=own)))}
        ),
    )
    fork = push_run(fake, sha(2), event="pull_request", head_repo="mallory/transformers")
    forged = measurement(
        tmp_path, [Case(BERT, status="failed", stage="export", message="x")], commit=sha(2), parent=sha(1), run_id=fork
    )
    fake.add_artifact(fork, "export-measurement", zipped({"measurement.json": dumps(forged)}))
    liar = push_run(fake, sha(3))
    claims = measurement(
        tmp_path, [Case(BERT, status="failed", stage="export", message="x")], commit=sha(3), parent=sha(1), run_id=own
    )
    fake.add_artifact(liar, "export-measurement", zipped({"measurement.json": dumps(claims)}))
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output
    state = read_state(tmp_path / "base" / "baseline.json")
    assert [m.result.status.value for ms in state.cells.values() for m in ms] == ["passed"]
    assert state.runs == {own}


def test_a_measurement_placing_results_at_another_commit_than_its_run_s_is_passed_over(fake, gh, tmp_path):
    """A run on main GitHub says ran sha(2) uploads results "at" sha(1), main's merge base for PRs: they would
    judge those PRs and, failing, name sha(1) the culprit. Only the run's own commit is taken."""
    first = push_run(fake, sha(1))
    fake.add_artifact(
        first,
        "export-measurement",
        zipped(
            {"measurement.json": dumps(measurement(tmp_path, [Case(BERT)], commit=sha(1), parent=None, run_id=first))}
        ),
    )
    second = push_run(fake, sha(2))
    broken = [Case(BERT, status="failed", stage="export", message="x")]
    placed = measurement(tmp_path, broken, commit=sha(1), parent=None, run_id=second, time="2026-12-02T00:00:00Z")
    fake.add_artifact(second, "export-measurement", zipped({"measurement.json": dumps(placed)}))
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output
    state = read_state(tmp_path / "base" / "baseline.json")
    assert [(m.run_id, m.result.status.value) for ms in state.cells.values() for m in ms] == [(first, "passed")]
    assert state.runs == {first}


def test_a_flood_of_fork_runs_on_a_branch_named_main_does_not_push_main_s_state_out_of_the_scan(fake, gh, tmp_path):
    """A fork's PR edits export-baseline.yml to run on `pull_request` from its branch `main`, 70 times:
    listed by branch alone they would fill the 60-run window and main's state would be "none yet"."""
    own = push_run(fake, sha(1))
    good = fold(measurement(tmp_path, [Case(BERT)], commit=sha(1), parent=None, run_id=own))
    fake.add_artifact(own, "export-baseline", zipped({"baseline.json": dumps(good)}))
    for _ in range(70):
        fork = push_run(fake, sha(2), event="pull_request", head_repo="mallory/transformers")
        fake.add_artifact(fork, "export-baseline", zipped({"junk.txt": "x"}))
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output
    assert outputs(gh.output)["found"] == "true"
    assert read_state(tmp_path / "base" / "baseline.json").runs == {own}


def test_a_state_of_a_newer_version_is_refused_with_what_to_do(fake, gh, tmp_path):
    run = push_run(fake, sha(1))
    newer = json.dumps({"format": "export-bot-baseline", "version": 4, "cells": {}})
    fake.add_artifact(run, "export-baseline", zipped({"baseline.json": newer}))
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 2
    assert "version 4, written by a newer export-bot" in result.output and "update the bot-ref" in result.output
    assert not (tmp_path / "base" / "baseline.json").exists()


def test_a_version_1_artifact_without_a_readable_cell_is_refused_not_read_as_an_empty_baseline(fake, gh, tmp_path):
    run = push_run(fake, sha(1))
    fake.add_artifact(run, "export-baseline", zipped({"baseline-1.xml": "not xml"}))
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 2 and "no readable cell" in result.output


def test_unsafe_member_names_are_refused(tmp_path):
    with pytest.raises(ArtifactError, match="outside the target folder"):
        extract(zipped({"../evil.xml": "x"}), tmp_path)
    with pytest.raises(ArtifactError, match="not a zip"):
        extract(b"nope", tmp_path)


@pytest.mark.parametrize("step", [r"/zip$", r"/_blobs/artifacts/"], ids=["artifact", "blob storage"])
def test_a_transient_storage_error_while_downloading_is_retried_never_read_as_a_corrupt_baseline(
    fake, gh, tmp_path, step
):
    run = push_run(fake, sha(1))
    m = measurement(tmp_path, [Case(BERT)], commit=sha(1), parent=sha(15), run_id=run)
    fake.add_artifact(run, "export-baseline", zipped({"baseline.json": dumps(fold(m))}))
    fake.inject("status", method="GET", path=step, times=1, status=503)
    out = tmp_path / "base"
    result = gh("baseline", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert read_state(out / "baseline.json") == fold(m)


def test_a_storage_outage_says_so_and_never_says_to_delete_the_artifact(fake, gh, tmp_path):
    run = push_run(fake, sha(1))
    m = measurement(tmp_path, [Case(BERT)], commit=sha(1), parent=sha(15), run_id=run)
    fake.add_artifact(run, "export-baseline", zipped({"baseline.json": dumps(fold(m))}))
    fake.inject("status", method="GET", path=r"/_blobs/artifacts/", times=100, status=503)
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code != 0
    assert "503" in result.output and "delete" not in result.output.lower(), result.output


def test_the_artifacts_are_found_by_one_name_filtered_listing_not_one_request_per_run(fake, gh, tmp_path):
    """`GITHUB_TOKEN` has 1,000 requests an hour per repository, shared by every workflow: a baseline
    read in every PR's report job must not cost one artifact listing per run it looks at."""
    runs = [push_run(fake, sha(n), status="in_progress") for n in range(1, 41)]
    state = None
    for n, run in enumerate(runs, 1):
        m = measurement(tmp_path, [Case(BERT)], commit=sha(n), parent=sha(n - 1) if n > 1 else sha(999), run_id=run)
        state = fold(state, m) if state is not None else fold(m)
        fake.add_artifact(run, "export-measurement", zipped({"measurement.json": dumps(m)}))
    fake.add_artifact(runs[-1], "export-baseline", zipped({"baseline.json": dumps(state)}))
    fake.requests.clear()
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output
    per_run = [p for m, p in fake.requests if "/actions/runs/" in p and p.endswith("/artifacts")]
    listings = [p for m, p in fake.requests if p.endswith("/actions/artifacts")]
    assert per_run == [] and 1 <= len(listings) <= 4
    assert len(fake.requests) <= 12, fake.requests  # run listings, artifact listings, downloads
