"""`export-bot install-spec`: the runner's requirement and its shipped constraints (torch pinned, transformers absent)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from bot import __version__
from bot.cli import main
from bot.toml import loads
from tests.conftest import ROOT


def test_the_spec_names_the_runner_extra_at_this_version():
    result = CliRunner().invoke(main, ["install-spec"])
    assert result.exit_code == 0 and result.output.strip() == f"export-bot[runner]=={__version__}"


def test_the_constraints_pin_the_runner_and_torch_and_never_transformers():
    path = Path(CliRunner().invoke(main, ["install-spec", "--constraints"]).output.strip())
    pins = dict(line.split("==") for line in path.read_text().splitlines() if line.strip() and not line.startswith("#"))
    assert pins["torch"] == "2.13.0" and "transformers" not in pins
    project = loads((ROOT / "pyproject.toml").read_text())["project"]
    runner = {req.split(">")[0].split("=")[0] for req in project["optional-dependencies"]["runner"]}
    assert runner <= set(pins), "every runner requirement has a tested version in the constraints"


def test_the_light_install_holds_neither_torch_nor_transformers():
    project = loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {req.split(">")[0].split("=")[0].split(";")[0].strip().lower() for req in project["dependencies"]}
    assert names == {"click", "tomlkit", "lxml", "pygithub", "tomli"}
    assert project["requires-python"] == ">=3.10,<3.14"


def test_the_license_is_an_spdx_expression_that_the_build_backend_reads_without_a_deprecation():
    """setuptools deprecates `license = {text = …}` (such builds stop working after 2027-02-18); 77 reads SPDX."""
    pyproject = loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in pyproject["build-system"]["requires"]
