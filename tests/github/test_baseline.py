"""`export-bot github baseline`: the newest successful main run's baseline artifact, unpacked."""

from __future__ import annotations

import pytest

from bot.publish.baseline import ArtifactError, extract
from tests.github.conftest import outputs, zipped


def test_the_newest_main_run_with_the_artifact_is_downloaded_whatever_its_conclusion(fake, gh, tmp_path):
    # Run 3's sweep uploaded its baseline, then a later job (the obsolete-skip PR) failed the run:
    # its baseline is still the newest sweep.
    fake.add_run(
        "export-baseline.yml", head_sha="1" * 40, artifacts={"export-baseline": zipped({"baseline-1.xml": "old"})}
    )
    fake.add_run(
        "export-baseline.yml", head_sha="2" * 40, artifacts={"export-baseline": zipped({"baseline-1.xml": "new"})}
    )
    fake.add_run(
        "export-baseline.yml",
        head_sha="3" * 40,
        conclusion="failure",
        artifacts={"export-baseline": zipped({"baseline-1.xml": "newest"})},
    )
    fake.add_run(
        "export-baseline.yml",
        head_sha="4" * 40,
        branch="other",
        artifacts={"export-baseline": zipped({"baseline-1.xml": "branch"})},
    )
    out = tmp_path / "base"
    result = gh("baseline", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (out / "baseline-1.xml").read_text() == "newest"
    assert outputs(gh.output) == {"found": "true", "sha": "3" * 40}


def test_no_baseline_yet_is_not_an_error(fake, gh, tmp_path):
    result = gh("baseline", "--out", str(tmp_path / "base"))
    assert result.exit_code == 0 and "no baseline yet" in result.output
    assert outputs(gh.output) == {"found": "false"}


def test_a_run_without_the_artifact_is_passed_over(fake, gh, tmp_path):
    fake.add_run("export-baseline.yml", head_sha="1" * 40, artifacts={"export-baseline": zipped({"b.xml": "ok"})})
    fake.add_run("export-baseline.yml", head_sha="2" * 40, artifacts={"something-else": zipped({"x": "y"})})
    assert gh("baseline", "--out", str(tmp_path / "base")).exit_code == 0
    assert (tmp_path / "base" / "b.xml").read_text() == "ok"


def test_unsafe_member_names_are_refused(tmp_path):
    with pytest.raises(ArtifactError, match="outside the target folder"):
        extract(zipped({"../evil.xml": "x"}), tmp_path)
    with pytest.raises(ArtifactError, match="not a zip"):
        extract(b"nope", tmp_path)
