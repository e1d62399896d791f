"""Settings built once from `[tool.export-bot]` in pyproject.toml (defaults per docs/selection.md) and passed in."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from bot import toml as tomllib
from bot.cells import BACKENDS
from bot.errors import BotError

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
    min_passes: int = 3  # consecutive passing probes before a skip counts as obsolete on main
    # GitHub calls (bot/publish): retries of transient failures and their waits, in seconds.
    github_retries: int = 5
    github_backoff: float = 1.0
    github_write_interval: float = 1.0
    github_rate_limit_wait: float = 60.0
    github_timeout: int = 30  # seconds one request may take before it is retried (PyGithub wants an int)
    # The keys the file set: a configured skiplist folder that is missing is an error, while
    # an unconfigured one falls back to the bot's own skiplists.
    configured: frozenset[str] = field(default=frozenset(), compare=False)


def load_settings(pyproject: Path | str | None = None) -> Settings:
    """Read `[tool.export-bot]` from `pyproject` (default: ./pyproject.toml); missing file → defaults."""
    path = Path(pyproject) if pyproject else Path("pyproject.toml")
    if not path.is_file():
        return Settings()
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("export-bot", {})
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: {exc}") from exc
    known = {f.name: f for f in fields(Settings) if f.name != "configured"}
    values, extra = {}, {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in known:
            extra[key] = value
            continue
        default = getattr(Settings, name, None)
        if isinstance(default, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SettingsError(f"{path}: [tool.export-bot] {key} must be a list of strings")
            value = tuple(value)
            if name == "backends" and set(value) - set(BACKENDS):
                raise SettingsError(f"{path}: [tool.export-bot] backends may name only {', '.join(BACKENDS)}")
        elif isinstance(default, Path):
            value = (path.parent / value) if not Path(value).is_absolute() else Path(value)
        elif isinstance(default, bool) and not isinstance(value, bool):
            raise SettingsError(f"{path}: [tool.export-bot] {key} must be true or false")
        elif name == "source":
            value = _resolve_source(str(value), path.parent)
        values[name] = value
    if extra:
        raise SettingsError(
            f"{path}: unknown key(s) in [tool.export-bot]: {', '.join(sorted(extra))}; "
            f"known keys: {', '.join(k.replace('_', '-') for k in sorted(known))}"
        )
    return Settings(**values, configured=frozenset(values))


def _resolve_source(spec: str, folder: Path) -> str:
    """`transformers-tests:PATH` with a relative PATH means relative to the pyproject, not the cwd."""
    kind, sep, where = spec.partition(":")
    if sep and kind == "transformers-tests" and where and not Path(where).is_absolute():
        return f"{kind}:{(folder / where).resolve()}"
    return spec
