"""Settings built once from `[tool.export-bot]` in pyproject.toml (defaults per docs/selection.md) and passed in."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot import toml as tomllib
from bot.cells import BACKENDS
from bot.errors import BotError
from bot.files import read_text
from bot.profiles import PROFILES, RULES_PROFILE

logger = logging.getLogger(__name__)

# Shared code every export goes through (docs/selection.md): a change here runs the `core` preset.
DEFAULT_SHARED_PATHS = (
    "src/transformers/exporters/**",
    "src/transformers/modeling_utils.py",
    "src/transformers/cache_utils.py",
    "src/transformers/masking_utils.py",
    "src/transformers/integrations/sdpa_attention.py",
    "src/transformers/generation/**",
)


class SettingsError(BotError, ValueError):
    """`[tool.export-bot]` has a key or value the bot cannot use; the message says which."""


@dataclass(frozen=True)
class Settings:
    skiplists: Path = Path("skiplists")
    source: str = "zoo"
    # The backends this repository gates on (docs/selection.md); empty means all four.
    # `select` keeps only their cells and `run` defaults to them.
    backends: tuple[str, ...] = ()
    shared_paths: tuple[str, ...] = DEFAULT_SHARED_PATHS
    # Model classes run when shared code changes; empty means the model source's `core` preset.
    core: tuple[str, ...] = ()
    dependents: bool = True
    run_modular_descendants: bool = False
    skiplist_paths: tuple[str, ...] = ("skiplists/*.toml",)
    cell_timeout: float = 1000.0  # the seed's EXPORT_TEST_TIMEOUT
    rules: str = RULES_PROFILE  # the bot's rules profile where the checkout's tests do not judge (docs/rules.md)
    min_passes: int = 3  # consecutive passing probes before a skip counts as obsolete on main
    # GitHub calls (bot/publish): retries of transient failures and their waits, in seconds.
    github_retries: int = 5
    github_backoff: float = 1.0
    github_write_interval: float = 1.0
    github_rate_limit_wait: float = 60.0
    github_timeout: int = 30  # seconds one request may take before it is retried (PyGithub wants an int)
    # Artifacts a run uploaded are written by the PR's code: their size is checked before they are
    # downloaded (the archive) and before each member is inflated, in MB.
    artifact_max_mb: float = 256.0
    artifact_member_max_mb: float = 512.0
    # Main's baseline (docs/baseline.md): results kept per cell, the runs a flip counts within,
    # how often the full sweep runs at the latest, and the age past which a base result is "old".
    baseline_history: int = 10
    flaky_window: int = 10
    sweep_every_days: float = 7.0
    stale_days: float = 7.0
    # Drift (docs/diff.md): a passing cell whose error grew this many times (and reached this share
    # of its tolerance), or whose export got this many times and seconds slower; `drift_fails` fails the verdict.
    drift_error_factor: float = 10.0
    drift_error_floor: float = 0.5
    drift_time_factor: float = 2.0
    drift_time_seconds: float = 5.0
    drift_artifact_factor: float = 1.2
    drift_fails: bool = False
    # The tracking issue (docs/github.md): `@`-mention a culprit's author and merger, or only name them.
    mention_culprits: bool = False
    # The keys the file set: a configured skiplist folder that is missing is an error, while
    # an unconfigured one falls back to the bot's own skiplists.
    configured: frozenset[str] = field(default=frozenset(), compare=False)


# The schema of `[tool.export-bot]` (docs/selection.md): every key's type and range. A number
# range is inclusive unless `above` says the lower bound itself is refused.
@dataclass(frozen=True)
class Key:
    kind: str  # "path", "source", "strings", "backends", "rules", "bool", "int" or "number"
    low: float | None = None
    high: float | None = None
    above: bool = False  # low < value, rather than low <= value


SCHEMA: dict[str, Key] = {
    "skiplists": Key("path"),
    "source": Key("source"),
    "backends": Key("backends"),
    "shared_paths": Key("strings"),
    "core": Key("strings"),
    "dependents": Key("bool"),
    "run_modular_descendants": Key("bool"),
    "skiplist_paths": Key("strings"),
    "cell_timeout": Key("number", 0, 7 * 24 * 3600, above=True),
    "rules": Key("rules"),
    "min_passes": Key("int", 1, 100),
    "github_retries": Key("int", 0, 50),
    "github_backoff": Key("number", 0, 600),
    "github_write_interval": Key("number", 0, 600),
    "github_rate_limit_wait": Key("number", 0, 3600),
    "github_timeout": Key("int", 1, 3600),
    "artifact_max_mb": Key("number", 0, 1 << 20, above=True),
    "artifact_member_max_mb": Key("number", 0, 1 << 20, above=True),
    "baseline_history": Key("int", 2, 1000),
    "flaky_window": Key("int", 1, 1000),
    "sweep_every_days": Key("number", 0, 366, above=True),
    "stale_days": Key("number", 0, 366, above=True),
    "drift_error_factor": Key("number", 1, 1e9),
    "drift_error_floor": Key("number", 0, 1e9),
    "drift_time_factor": Key("number", 1, 1e9),
    "drift_time_seconds": Key("number", 0, 1e9),
    "drift_artifact_factor": Key("number", 1, 1e9),
    "drift_fails": Key("bool"),
    "mention_culprits": Key("bool"),
}


def load_settings(pyproject: Path | str | None = None) -> Settings:
    """Read `[tool.export-bot]` from `pyproject` (default: ./pyproject.toml); missing file → defaults."""
    path = Path(pyproject) if pyproject else Path("pyproject.toml")
    if not path.exists():
        return Settings()  # a FIFO or a folder in its place is refused by read_text, not taken as no settings
    return settings_from_text(read_text(path), str(path), path.parent)


def settings_from_text(text: str, where: str, folder: Path) -> Settings:
    """The settings of a pyproject's text; `where` names it in errors, `folder` is what its paths are relative to.

    Every value is checked against `SCHEMA`; a bad one is a SettingsError naming the file, the
    key and what it must be. An unknown key is a warning naming the closest known key, so a
    newer pyproject still works with an older bot.
    """
    return settings_from_table(export_bot_table(text, where), where, folder)


def export_bot_table(text: str, where: str) -> dict[str, object]:
    """The `[tool.export-bot]` table of a pyproject's text as written (empty without one), its values unchecked."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{where}: not valid TOML ({exc}); fix the file") from None
    tool = document.get("tool", {})
    table = tool.get("export-bot", {}) if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        where_in = "tool.export-bot" if isinstance(tool, dict) else "tool"
        raise SettingsError(f"{where}: `{where_in}` must be a table (`[tool.export-bot]` with key = value lines)")
    return dict(table)


def settings_from_table(table: Mapping[str, object], where: str, folder: Path) -> Settings:
    """The settings of a `[tool.export-bot]` table, every key checked (see `settings_from_text`)."""
    values: dict[str, object] = {}
    spelled: dict[str, str] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in SCHEMA:
            near = difflib.get_close_matches(name, SCHEMA, n=1)
            hint = (
                f"; did you mean `{_dashed(near[0])}`?" if near else f"; known keys: {', '.join(map(_dashed, SCHEMA))}"
            )
            logger.warning("%s: unknown key `%s` in [tool.export-bot] is ignored%s", where, key, hint)
            continue
        if name in spelled:
            raise SettingsError(f"{where}: [tool.export-bot] sets `{spelled[name]}` and `{key}`: keep one of them")
        spelled[name] = key
        values[name] = _checked(SCHEMA[name], value, f"{where}: [tool.export-bot] {key}", folder)
    configured = frozenset(values)
    if "skiplists" in values and "skiplist_paths" not in values:
        values["skiplist_paths"] = _skiplist_globs(values["skiplists"], folder)
    return Settings(**values, configured=configured)


def _skiplist_globs(skiplists: Path, folder: Path) -> tuple[str, ...]:
    """The paths of a moved skiplist folder's files, as a change lists them: an edit there is a skiplist edit.

    Normalised, not resolved (a symlinked folder is named by where it sits); a folder outside the
    repository holds no file a change can touch, so the default stays.
    """
    try:
        inside = Path(os.path.normpath(folder / skiplists)).relative_to(os.path.normpath(folder))
    except ValueError:
        return Settings.skiplist_paths
    return (f"{inside.as_posix()}/*.toml",)


def known_keys(table: Mapping[str, object]) -> dict[str, object]:
    """The keys of a `[tool.export-bot]` table this bot reads, spelled as in `SCHEMA` (an unknown key changes nothing)."""
    return {key.replace("-", "_"): value for key, value in table.items() if key.replace("-", "_") in SCHEMA}


def _checked(key: Key, value: object, where: str, folder: Path) -> object:
    """The value as Settings holds it, or a SettingsError saying what it must be."""
    if key.kind in _PLAIN:
        fits, must_be, held = _PLAIN[key.kind]
        if not fits(value):
            raise SettingsError(f"{where} must be {must_be}, not {_show(value)}")
        return held(value)
    if key.kind in ("path", "source"):
        return _checked_place(key, value, where, folder)
    return _checked_number(key, value, where)


def _is_backends(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value) and not set(value) - set(BACKENDS)


def _is_strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


# The kinds one test decides: whether the value fits, what it must be (for the error), how Settings holds it.
_PLAIN: dict[str, tuple[Callable[[object], bool], str, Callable[[object], object]]] = {
    "bool": (lambda value: isinstance(value, bool), "true or false", lambda value: value),
    "backends": (_is_backends, f"a list of backends ({', '.join(BACKENDS)})", tuple),
    "rules": (
        lambda value: value in PROFILES,
        f"one of the rules profiles ({', '.join(PROFILES)})",
        lambda value: value,
    ),
    "strings": (_is_strings, 'a list of non-empty strings (["…", …])', tuple),
}


def _checked_place(key: Key, value: object, where: str, folder: Path) -> object:
    """A path (relative to the pyproject's folder) or a model source."""
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{where} must be a non-empty string, not {_show(value)}")
    if key.kind == "path":
        return Path(value) if Path(value).is_absolute() else folder / value
    kind, sep, rest = value.strip().partition(":")
    if value.strip() != "zoo" and not (kind == "transformers-tests" and sep and rest.strip()):
        raise SettingsError(f"{where} must be 'zoo' or 'transformers-tests:PATH', not {value!r}")
    return _resolve_source(value.strip(), folder)


def _checked_number(key: Key, value: object, where: str) -> object:
    """A whole or finite number inside the key's bounds."""
    whole = key.kind == "int"
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or value != value:
        raise SettingsError(f"{where} must be {'a whole number' if whole else 'a finite number'}, not {_show(value)}")
    too_low = key.low is not None and (value <= key.low if key.above else value < key.low)
    if too_low or (key.high is not None and value > key.high):
        low = "" if key.low is None else f"{'above' if key.above else 'at least'} {key.low:g}"
        high = "" if key.high is None else f"at most {key.high:g}"
        raise SettingsError(f"{where} must be {' and '.join(filter(None, (low, high)))}, not {value}")
    return value if whole else float(value)


def _show(value: object) -> str:
    kind = {
        bool: "a boolean",
        int: "a number",
        float: "a decimal number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }
    text = repr(value)
    return f"{kind.get(type(value), type(value).__name__)} ({text if len(text) <= 40 else text[:37] + '...'})"


def _dashed(name: str) -> str:
    return name.replace("_", "-")


def _resolve_source(spec: str, folder: Path) -> str:
    """`transformers-tests:PATH` with a relative PATH means relative to the pyproject, not the cwd."""
    kind, sep, where = spec.partition(":")
    if sep and kind == "transformers-tests" and where and not Path(where).is_absolute():
        return f"{kind}:{(folder / where).resolve()}"
    return spec
