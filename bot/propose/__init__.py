"""Skiplist proposals: entries for new failures, removal and narrowing of obsolete skips, the patch."""
