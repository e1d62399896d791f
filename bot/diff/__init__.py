"""Diff stage: head results against main's, judged with head's skiplists, into a typed report."""

from bot.diff.compare import diff

__all__ = ["diff"]
