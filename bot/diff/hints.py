"""Hints for well-known export errors: the table in hints.toml (package data), matched against a group's signature."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from bot.toml import loads


@dataclass(frozen=True)
class Hint:
    """A one-line hint for a well-known export error, with the upstream page that explains it."""

    id: str
    text: str
    link: str = ""

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text, "link": self.link}

    @classmethod
    def from_json(cls, data: Mapping) -> Hint:
        return cls(data["id"], data.get("text", ""), data.get("link", ""))


@dataclass(frozen=True)
class HintRule:
    hint: Hint
    patterns: tuple[re.Pattern, ...]

    def matches(self, text: str) -> bool:
        return any(pattern.search(text) for pattern in self.patterns)


def parse_hints(text: str) -> tuple[HintRule, ...]:
    """The rules of a hints table, in file order (the first match wins)."""
    rules = []
    for entry in loads(text).get("hint", ()):
        hint = Hint(entry["id"], entry["text"].strip(), entry.get("link", ""))
        rules.append(HintRule(hint, tuple(re.compile(p) for p in entry["patterns"])))
    return tuple(rules)


@cache
def default_hints() -> tuple[HintRule, ...]:
    return parse_hints(resources.files("bot.diff").joinpath("hints.toml").read_text(encoding="utf-8"))


def hint_for(stage: str, signature: str, rules: tuple[HintRule, ...] | None = None) -> Hint | None:
    """The first hint whose pattern matches `stage: signature`; None for an error the table does not know."""
    text = f"{stage}: {signature}"
    for rule in default_hints() if rules is None else rules:
        if rule.matches(text):
            return rule.hint
    return None


def known_hint(hint_id: str) -> Hint | None:
    """The hint the bot ships under this id: a report only names a hint, its text and link are the bot's."""
    return next((rule.hint for rule in default_hints() if rule.hint.id == hint_id), None)
