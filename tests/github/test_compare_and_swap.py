"""Main's state changes are compare-and-swap: a second writer moving the obsolete-skip branch between this
job's read and its write keeps its update, and this job ends saying it was superseded (docs/github.md)."""

from __future__ import annotations

from tests.github.test_obsolete_skips import BRANCH, GDINO, _night


def _second_writer(fake, name: str):
    """Another job (a displaced run, a hostile one in the same concurrency group) puts its own commit on the branch."""

    def act(fake) -> None:
        main = fake.state.refs["heads/main"]
        fake.state.refs[f"heads/{BRANCH}"] = fake.commit({"skiplists/x.toml": name}, (main,), name)

    return act


def test_a_writer_that_moves_the_branch_before_the_update_keeps_it_and_this_job_says_superseded(fake, gh):
    for _ in range(3):
        _night(fake, gh, [GDINO])
    [pull] = [p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]
    before = dict(pull)
    # Between the job's read of the branch and its write: while it makes its commit.
    fake.before(method="POST", path=r"/git/commits$", action=_second_writer(fake, "other"))
    _, result = _night(fake, gh, [GDINO])
    assert result.exit_code == 0, result.output
    assert "superseded" in result.output and "another job updated it" in result.output, result.output
    other = fake.state.refs[f"heads/{BRANCH}"]
    assert fake.state.commits[other]["message"] == "other"  # the other writer's update stands
    assert {k: pull[k] for k in ("title", "body", "state")} == {k: before[k] for k in ("title", "body", "state")}


def test_a_writer_that_creates_the_branch_first_keeps_it_and_no_pull_request_is_opened(fake, gh):
    for _ in range(2):
        _night(fake, gh, [GDINO])
    # The narrowest window: after the job's last look, as its creation reaches GitHub, which refuses a
    # ref that exists; the job then finds another commit there.
    fake.before(method="POST", path=r"/git/refs$", action=_second_writer(fake, "first"))
    _, result = _night(fake, gh, [GDINO])  # the third night would open the PR
    assert result.exit_code == 0, result.output
    assert "superseded" in result.output and "created" in result.output, result.output
    assert fake.state.commits[fake.state.refs[f"heads/{BRANCH}"]]["message"] == "first"
    assert not [p for p in fake.state.pulls.values() if p["head_ref"] == BRANCH]


def test_without_a_second_writer_the_branch_moves_from_where_it_was_read(fake, gh):
    for _ in range(3):
        _night(fake, gh, [GDINO])
    first = fake.state.refs[f"heads/{BRANCH}"]
    fake.state.refs["heads/main"] = fake.commit({"README.md": "moved on\n"}, (fake.state.refs["heads/main"],), "m")
    _, result = _night(fake, gh, [GDINO])
    assert result.exit_code == 0 and "superseded" not in result.output, result.output
    assert fake.state.refs[f"heads/{BRANCH}"] != first
