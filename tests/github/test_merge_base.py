"""`export-bot github merge-base`: the PR's merge base from GitHub's compare API, printed and output as `sha=`."""

from __future__ import annotations

import pytest

from tests.github.conftest import outputs


@pytest.fixture
def diverged(fake):
    """main moved on twice after `feature` branched off it; feature has two commits of its own."""
    fork_point = fake.state.refs["heads/main"]
    feature = fake.commit({"src/y.py": "y = 2\n"}, (fake.state.refs["heads/feature"],), "more")
    fake.state.refs["heads/feature"] = feature
    main = fake.commit({"README.md": "one\n"}, (fork_point,), "main 1")
    fake.state.refs["heads/main"] = fake.commit({"README.md": "two\n"}, (main,), "main 2")
    return fork_point, feature


def test_the_merge_base_of_a_pr_whose_base_moved_on_is_the_fork_point(fake, gh, diverged, tmp_path):
    fork_point, feature = diverged
    result = gh("merge-base", "--base", "main", "--head", feature)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == fork_point
    assert outputs(gh.output) == {"sha": fork_point}
    assert ("GET", f"/repos/{fake.full_name}/compare/main...{feature}") in fake.requests


def test_a_base_sha_and_an_output_file_of_its_own(fake, gh, diverged, tmp_path):
    fork_point, feature = diverged
    out = tmp_path / "merge-base.txt"
    result = gh(
        "merge-base", "--base", fake.state.refs["heads/main"], "--head", feature[:12], "--github-output", str(out)
    )
    assert result.exit_code == 0, result.output
    assert outputs(out) == {"sha": fork_point} and gh.output.read_text() == ""


def test_a_head_already_in_the_base_is_its_own_merge_base(fake, gh):
    main = fake.state.refs["heads/main"]
    result = gh("merge-base", "--base", "feature", "--head", main)
    assert result.exit_code == 0 and result.output.strip() == main


@pytest.mark.parametrize("head", ["0" * 40, "1234567"])
def test_an_unknown_commit_is_exit_2_in_one_line(fake, gh, head):
    result = gh("merge-base", "--base", "main", "--head", head)
    assert result.exit_code == 2
    [line] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "HTTP 404" in line and "merge base" in line and "Traceback" not in result.output


def test_unrelated_histories_have_no_merge_base(fake, gh):
    orphan = fake.commit({"other.txt": "x\n"}, (), "orphan")
    result = gh("merge-base", "--base", "main", "--head", orphan)
    assert result.exit_code == 2 and "No common ancestor" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ("--base", "main", "--head", "feature"),  # a head must be a commit SHA
        ("--base", "main...x", "--head", "a" * 40),
        ("--base", "-x", "--head", "a" * 40),
        ("--base", "main", "--head", "a" * 41),
    ],
)
def test_what_is_no_ref_is_a_usage_error_before_github_is_asked(fake, gh, args):
    result = gh("merge-base", *args)
    assert result.exit_code == 2 and "Invalid value" in result.output
    assert not [path for _, path in fake.requests if "/compare/" in path]
