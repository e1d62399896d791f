"""Skiplists: TOML files mapping scope → model class → reason, and what they say about a cell."""

from bot.skiplist.model import Entry, Explanation, Skiplist, SkiplistError, Skiplists, load_skiplists

__all__ = ["Entry", "Explanation", "Skiplist", "Skiplists", "SkiplistError", "load_skiplists"]
