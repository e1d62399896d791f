"""Provenance of the transformers a run tests, and the checkout check of `run` and `check` (real git, real interpreters)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from bot.run.provenance import (
    CheckoutMismatch,
    checkout_sha,
    expected_checkout,
    find_transformers,
    verify_checkout,
)

ROOT = Path(__file__).resolve().parents[2]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def make_checkout(root: Path, *, pyproject: str = "") -> Path:
    """A Transformers-shaped git checkout whose `src/transformers` is a stub package (never imported here)."""
    package = root / "src" / "transformers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "5.24.0.dev0"\n', encoding="utf-8")
    (root / "tests" / "models").mkdir(parents=True)
    if pyproject:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "checkout")
    return root


def test_checkout_sha_is_the_head_of_a_tree_that_tracks_the_package(tmp_path):
    checkout = make_checkout(tmp_path / "transformers")
    assert checkout_sha(checkout / "src" / "transformers") == git(checkout, "rev-parse", "HEAD")
    # A package folder that sits untracked inside some other repository (a venv under a project) is no checkout.
    stray = checkout / ".venv" / "site-packages" / "transformers"
    stray.mkdir(parents=True)
    (stray / "__init__.py").write_text("", encoding="utf-8")
    assert checkout_sha(stray) is None
    outside = tmp_path / "plain" / "transformers"
    outside.mkdir(parents=True)
    (outside / "__init__.py").write_text("", encoding="utf-8")
    assert checkout_sha(outside) is None


def test_which_checkout_a_run_must_test(tmp_path):
    checkout = make_checkout(tmp_path / "transformers")
    fixture = tmp_path / "fixture"
    (fixture / "tests" / "models").mkdir(parents=True)
    assert expected_checkout(tmp_path / "x", "zoo", None) == tmp_path / "x"  # --checkout wins
    assert expected_checkout(None, f"transformers-tests:{checkout}", None) == checkout
    # A tests-only tree names no package: nothing to check.
    assert expected_checkout(None, f"transformers-tests:{fixture}", None) is None
    assert expected_checkout(None, "zoo", checkout) == checkout  # the configured repository itself
    assert expected_checkout(None, "zoo", fixture) is None
    assert expected_checkout(None, "zoo", None) is None


def test_verify_checkout_names_what_was_found_and_how_to_install(tmp_path):
    checkout = make_checkout(tmp_path / "transformers")
    verify_checkout(checkout, checkout / "src" / "transformers", "5.24.0.dev0")  # the checkout's own: fine
    elsewhere = tmp_path / "site-packages" / "transformers"
    with pytest.raises(CheckoutMismatch) as raised:
        verify_checkout(checkout, elsewhere, "5.23.0")
    message = str(raised.value)
    assert str(elsewhere) in message and "5.23.0" in message and f"pip install -e {checkout}" in message
    with pytest.raises(CheckoutMismatch, match="not installed"):
        verify_checkout(checkout, None, None)
    with pytest.raises(CheckoutMismatch, match="no src/transformers/__init__.py"):
        verify_checkout(tmp_path, elsewhere, "5.23.0")


def test_found_transformers_is_the_one_the_interpreter_would_import(tmp_path):
    checkout = make_checkout(tmp_path / "transformers")
    code = (
        "from bot.run.provenance import installed_transformers as i; t = i(); print(t.location); print(t.sha); "
        "import sys; assert 'transformers' not in sys.modules"  # found, never imported
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout / "src"), str(ROOT)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    location, sha = out.splitlines()
    assert Path(location) == (checkout / "src" / "transformers").resolve()
    assert sha == git(checkout, "rev-parse", "HEAD")
    assert find_transformers() != Path(location)  # this process imports the installed package


@pytest.mark.parametrize("command", ["run", "check"])
def test_run_and_check_refuse_a_checkout_that_is_not_installed(tmp_path, monkeypatch, command):
    checkout = make_checkout(tmp_path / "transformers")
    runner = CliRunner()
    given = runner.invoke(main, [command, "--models", "BertModel", "--checkout", str(checkout)])
    assert given.exit_code == 2, given.output
    assert "pip install -e" in given.output and str(find_transformers()) in given.output
    tests_source = runner.invoke(main, [command, "--models", "BertModel", "--source", f"transformers-tests:{checkout}"])
    assert tests_source.exit_code == 2 and "not the checkout's" in tests_source.output
    # Inside the repository it guards (its pyproject configures the bot), no option is needed.
    inside = make_checkout(tmp_path / "repo", pyproject='[tool.export-bot]\nsource = "zoo"\n')
    monkeypatch.chdir(inside)
    implicit = runner.invoke(main, [command, "--models", "BertModel"])
    assert implicit.exit_code == 2 and f"pip install -e {Path('.')}" in implicit.output


def test_the_runner_records_the_checkout_it_tested(tmp_path):
    """`export-bot run` under a checkout's transformers: the check passes and the JUnit names the checkout.

    The stub package cannot export anything, so the cell itself ends as an error; what is
    checked is the testsuite's provenance, written before any cell runs.
    """
    checkout = make_checkout(tmp_path / "transformers")
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout / "src"), str(ROOT)])}
    command = [
        sys.executable,
        "-c",
        "from bot.cli import main; main()",
        "run",
        "--models",
        "GhostModel",
        "--backends",
        "dynamo",
        "--shapes",
        "static",
        "--no-generate",
        "-n",
        "0",
        "--checkout",
        str(checkout),
        "--junit",
        str(junit),
    ]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert Path(props["transformers.location"]) == (checkout / "src" / "transformers").resolve()
    assert props["transformers.sha"] == git(checkout, "rev-parse", "HEAD")
    assert props["version.transformers"] == "5.24.0.dev0"  # the checkout's, not the installed distribution's
