"""Build hook: the wheel carries the repository's skiplists/ as package data, in bot/data/skiplists.

skiplists/ holds the real files (an adopting repository copies the folder, README "Adopting");
the copy into the package is made here, at build time, so there is one source and no symlink.
The rest of the configuration is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SKIPLISTS = Path(__file__).resolve().parent / "skiplists"


class BuildWithSkiplists(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "bot" / "data" / "skiplists"
        target.mkdir(parents=True, exist_ok=True)
        for source in sorted(SKIPLISTS.glob("*.toml")):
            shutil.copyfile(source, target / source.name)


setup(cmdclass={"build_py": BuildWithSkiplists})
