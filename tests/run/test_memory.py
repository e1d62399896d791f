"""A cell's own peak memory: the high-water mark reset before the cell and read after (bot/run/memory.py)."""

from __future__ import annotations

import sys

import pytest

from bot.run import memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reset is Linux's own")


def test_the_peak_after_a_reset_is_this_cells_not_an_earlier_ones():
    assert memory.reset_peak()
    block = bytearray(256 * 1024 * 1024)  # touched: zero-filled pages are resident
    grown = memory.peak_bytes()
    del block
    assert memory.reset_peak()
    after = memory.peak_bytes()
    assert grown is not None and after is not None
    assert grown - after > 200 * 1024 * 1024, (grown, after)


def test_where_the_system_cannot_reset_nothing_is_claimed(monkeypatch, tmp_path):
    monkeypatch.setattr(memory, "CLEAR_REFS", tmp_path / "absent" / "clear_refs")
    monkeypatch.setattr(memory, "STATUS", tmp_path / "absent" / "status")
    assert memory.reset_peak() is False and memory.peak_bytes() is None
