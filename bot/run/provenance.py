"""Which transformers a run tests (version, installed folder, checkout sha), and the check that it is the checkout's."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bot.errors import BotError

_TESTS_PREFIX = "transformers-tests:"
PACKAGE_DIR = Path("src") / "transformers"  # where a Transformers checkout keeps the package


class CheckoutMismatch(BotError):
    """The transformers that would be imported is not the given checkout's: the run would test other code."""


@dataclass(frozen=True)
class Installed:
    """The transformers a run imports: found through the import system, never imported here."""

    version: str | None
    location: Path | None  # the package folder, `transformers.__file__`'s parent
    sha: str | None  # HEAD of the git work tree that tracks the folder, else None


def installed_transformers() -> Installed:
    location = find_transformers()
    version = package_version(location) if location else None
    if version is None:
        try:
            version = importlib.metadata.version("transformers")
        except importlib.metadata.PackageNotFoundError:
            version = None
    return Installed(version, location, checkout_sha(location) if location else None)


_VERSION = re.compile(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


def package_version(location: Path) -> str | None:
    """`__version__` as the package's own `__init__.py` spells it: the code found, not whichever
    distribution metadata happens to be installed beside it (they differ when a path shadows it)."""
    try:
        match = _VERSION.search((location / "__init__.py").read_text(encoding="utf-8"))
    except OSError:
        return None
    return match.group(1) if match else None


def find_transformers() -> Path | None:
    """The folder `import transformers` would load, resolved; found without running the package."""
    try:
        spec = importlib.util.find_spec("transformers")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin).resolve().parent


def checkout_sha(directory: Path) -> str | None:
    """HEAD of the git work tree holding `directory`, when that tree tracks the package's `__init__.py`.

    A site-packages folder inside some other repository (a virtual environment under a
    project's own checkout) is not a checkout of transformers, so tracking is required.
    """
    if not _git_ok(directory, "ls-files", "--error-unmatch", "__init__.py"):
        return None
    return _git_out(directory, "rev-parse", "HEAD")


def _git_ok(directory: Path, *args: str) -> bool:
    try:
        done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _git_out(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


def is_checkout(folder: Path) -> bool:
    return (folder / PACKAGE_DIR / "__init__.py").is_file()


def expected_checkout(explicit: Path | None, source: str, project: Path | None) -> Path | None:
    """The Transformers checkout whose code the run must test, if one was given (pure but for `is_file`).

    `--checkout PATH` first; else the PATH of `--source transformers-tests:PATH` when it holds
    `src/transformers`; else the folder of the pyproject.toml with `[tool.export-bot]` when it is a
    Transformers checkout (the bot run inside the repository it guards). A tests-only tree (a
    fixture with `tests/models` alone) names no package, so nothing is checked for it.
    """
    if explicit is not None:
        return explicit
    if source.startswith(_TESTS_PREFIX):
        path = Path(source[len(_TESTS_PREFIX) :]).expanduser()
        if is_checkout(path):
            return path
    if project is not None and is_checkout(project):
        return project
    return None


def verify_checkout(checkout: Path, found: Path | None, version: str | None) -> None:
    """Raise CheckoutMismatch unless `found` (the package that would be imported) is `checkout/src/transformers`."""
    want = (checkout / PACKAGE_DIR).resolve()
    install = f"install the checkout first: pip install -e {checkout}"
    if not (want / "__init__.py").is_file():
        raise CheckoutMismatch(
            f"--checkout {checkout}: no {PACKAGE_DIR}/__init__.py there; pass a Transformers checkout"
        )
    if found is None:
        raise CheckoutMismatch(f"transformers is not installed, so the checkout {checkout} cannot be tested; {install}")
    if found.resolve() != want:
        raise CheckoutMismatch(
            f"the transformers this run would import is {found} ({version or 'unknown version'}), not the "
            f"checkout's {want}: the run would test other code than {checkout}; {install}"
        )
