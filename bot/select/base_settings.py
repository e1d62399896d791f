"""The settings a pull request is judged by: `[tool.export-bot]` at its base; its own edits to them apply after the merge.

A PR that set `backends = ["dynamo"]` and changed a modeling file would otherwise narrow its own
gate. The selection file carries the base's table, so every later stage of the run judges by the
same settings, whatever the tested checkout's pyproject says (docs/selection.md, "Settings").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.select import changes as git
from bot.select.footprints import UNAVAILABLE
from bot.settings import Settings, SettingsError, export_bot_table, known_keys, settings_from_table

PYPROJECT = "pyproject.toml"  # at the repository's root, as Transformers keeps it
UNREADABLE = "(unreadable)"  # the key of the one change a head pyproject the bot cannot read lists


@dataclass(frozen=True)
class SettingsChange:
    """One key the PR sets differently: its value at the base and at head, None where the key is unset (the default)."""

    key: str
    base: object
    head: object

    def to_json(self) -> dict:
        return {"key": self.key, "base": _plain(self.base), "head": _plain(self.head)}

    @property
    def describe(self) -> str:
        if self.key == UNREADABLE:
            return str(self.head)
        return f"[tool.export-bot] {self.key.replace('_', '-')}: {_shown(self.base)} → {_shown(self.head)}"


@dataclass(frozen=True)
class BaseSettings:
    """The settings read at `commit` (`table` as written there, known keys only) and the PR's edits to them."""

    settings: Settings
    commit: str | None  # None: settings the command was handed (--config), not read from git
    table: Mapping[str, object] | None = field(default_factory=dict)  # None with them: later stages read their own
    after_merge: tuple[SettingsChange, ...] = ()
    file: str = PYPROJECT

    def to_json(self) -> dict:
        table = None if self.table is None else {k: _plain(v) for k, v in self.table.items()}
        return {"file": self.file, "commit": self.commit, "table": table}


def read_base_settings(repo: Path | str, base: str, head: str) -> BaseSettings:
    """The settings at `base`, checked (a bad one is a SettingsError, exit 2), and the keys `head` changed.

    The PR's own edits are the keys its head sets differently from where it branched; each is
    listed with the base's value and the head's, to apply after the merge.
    """
    where = f"{PYPROJECT} at the base {base[:12]}"
    table = _table_at(repo, base, where)
    settings = settings_from_table(table, f"{where} (the base's settings judge a pull request)", Path(repo))
    table = known_keys(table)
    forked = git.merge_base(repo, base, head)
    try:
        # Only the base's settings must be sound: the head's are compared, and checked once merged.
        before = table if forked == base else known_keys(_table_at(repo, forked, f"{PYPROJECT} at {forked[:12]}"))
        after = known_keys(_table_at(repo, head, f"{PYPROJECT} at the head {head[:12]}"))
    except SettingsError as exc:
        return BaseSettings(settings, base, table, (SettingsChange(UNREADABLE, None, str(exc)),))
    changed = sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
    edits = tuple(SettingsChange(key, table.get(key), after.get(key)) for key in changed)
    return BaseSettings(settings, base, table, edits)


def _table_at(repo: Path | str, ref: str, where: str) -> dict[str, object]:
    """`[tool.export-bot]` at `ref`, empty without a pyproject."""
    text = git.read_files(repo, ref, [PYPROJECT]).get(PYPROJECT)
    return {} if text is None else export_bot_table(text, where)


def settings_of_selection(document: Mapping, where: str, folder: Path = Path(".")) -> Settings | None:
    """The settings a selection document carries (`select` read them at the base), None when it carries none.

    Paths in them are relative to `folder`, the checkout's root where the later stage runs.
    """
    recorded = document.get("settings")
    table = recorded.get("table", ()) if isinstance(recorded, Mapping) else ()
    if recorded is None or table is None:
        return None  # an older selection, or settings `select` was handed (--config): the stage reads its own
    if not isinstance(table, Mapping):
        raise SettingsError(f"{where}: `settings.table` must be an object; write it again with `export-bot select`")
    commit = recorded.get("commit")
    return settings_from_table(table, f"{where}: settings of {recorded.get('file')} at {commit}", folder)


def comment_notes(document: Mapping) -> tuple[str, ...]:
    """What the comment lists below the selection: each of the PR's settings edits, which apply after the
    merge (the run is judged by the base's), each skiplist edit, which counts now, and main's footprints
    missing where they would have decided (docs/selection.md)."""
    recorded = document.get("settings")
    commit = recorded.get("commit") if isinstance(recorded, Mapping) else None
    at = f" at {commit[:12]}" if isinstance(commit, str) else ""
    notes = []
    for item in document.get("settings_after_merge") or ():
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            edit = SettingsChange(item["key"], item.get("base"), item.get("head"))
            notes.append(f"{edit.describe} — applies after the merge; this run is judged by the base's settings{at}")
    classes = document.get("classes")
    reasons = [r for rs in classes.values() if isinstance(rs, list) for r in rs] if isinstance(classes, Mapping) else []
    edits = {r.get("detail") for r in reasons if isinstance(r, Mapping) and r.get("kind") == "skiplist"}
    notes += [f"skiplist edit, counted now: {detail}" for detail in sorted(e for e in edits if isinstance(e, str))]
    selection_notes = document.get("notes")
    if isinstance(selection_notes, list):
        notes += [note for note in selection_notes if isinstance(note, str) and note.startswith(UNAVAILABLE)]
    return tuple(notes)


def _plain(value: object) -> object:
    """A TOML value as JSON holds it (a date or a table the schema refuses becomes its text)."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def _shown(value: object) -> str:
    return "unset" if value is None else json.dumps(_plain(value), ensure_ascii=False)
