"""What a job reads: JUnit files, main's per-commit baseline, the durations that balance shards, and its settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from bot.diff.compare import MainHistory
from bot.diff.model import MAX_BYTES, BaselineAge
from bot.errors import BotError
from bot.files import read_text
from bot.results import ResultSet, baseline, baseline_json, read_results
from bot.results.baseline import fold, newest
from bot.results.baseline_json import STATE_FILE, durations, read_state
from bot.run.shard import read_durations as junit_durations
from bot.select.base_settings import settings_of_selection
from bot.select.selection_file import read_selection_document
from bot.settings import Settings, load_settings


def read_junit(paths: Sequence[Path], expect_shards: int | None = None) -> ResultSet:
    """JUnit files or folders; a base given as main's state (a folder holding baseline.json, which
    `github baseline` writes) reads as each cell's newest result on main (docs/baseline.md)."""
    paths = list(paths)
    # exists(), not is_file(): a baseline.json that is a FIFO or a folder is refused by the reader,
    # never passed over for "no base" (which would judge every cell as new).
    if paths and all(Path(p).is_dir() and _present(Path(p) / STATE_FILE) for p in paths):
        return newest(fold(*(read_state(Path(p) / STATE_FILE) for p in paths)))
    return read_results(paths, expect_shards=expect_shards)


def read_durations(path: Path) -> dict[str, float]:
    """Seconds per cell id for shard balancing (`--durations`, EXPORT_BOT_DURATIONS): main's baseline.json
    (the file, or a folder holding it: each cell's newest measured duration), else an earlier run's JUnit."""
    path = Path(path)
    if path.is_dir() and _present(path / STATE_FILE):
        return durations(read_state(path / STATE_FILE))
    if not path.is_dir() and path.suffix == ".json":
        return durations(read_state(path))
    return junit_durations(path)


BASELINE_FILE = "baseline.json"  # main's per-commit baseline in a base folder (docs/diff.md)


def baseline_file(paths: Sequence[Path]) -> Path | None:
    """The baseline.json among the base paths (a folder holding one, or the file itself); None: JUnit only."""
    found = [
        p / BASELINE_FILE if p.is_dir() else p for p in paths if _present(p / BASELINE_FILE) or p.name == BASELINE_FILE
    ]
    if not found:
        return None
    if len(paths) > 1:
        raise BotError(
            f"--base: {found[0]} is main's per-commit baseline; pass it alone, not beside other base results"
        )
    return found[0]


def _present(path: Path) -> bool:
    """Something is at `path` (a dangling link too): the reader then says what is wrong with it."""
    return path.exists() or path.is_symlink()


def read_main_baseline(
    path: Path, merge_base: str | None, *, now: str, stale_days: float, flaky_window: int
) -> tuple[ResultSet, MainHistory]:
    """Each cell's base result at the merge base, and what main's history says beyond it (docs/diff.md)."""
    # The file itself, not read_state: a folder in its place is an error here, never an empty state.
    state = baseline_json.loads(read_text(path, limit=MAX_BYTES), where=str(path))
    base, age = baseline.at(state, merge_base, now=now, stale_days=stale_days)
    # The reader's age, with what the PR was judged at beside it.
    told = BaselineAge(**asdict(age), stale_days=stale_days, merge_base=merge_base, flaky_window=flaky_window)
    history = MainHistory(baseline.newest_said(state), baseline.flips(state, flaky_window), told)
    return replace(base, files=(str(path),)), history


def stage_settings(selection: Path | None) -> Settings:
    """The settings a stage after `select` judges by: those its selection file carries, else ./pyproject.toml's.

    `select` reads `[tool.export-bot]` at a pull request's base and writes it into the selection,
    so the shards and the report judge by the settings the selection was made with, not by the
    tested checkout's, which the PR may have edited (docs/selection.md, "Settings").
    """
    if selection is not None:
        settings = settings_of_selection(read_selection_document(selection)[1], str(selection))
        if settings is not None:
            return settings
    return load_settings()
