"""bot/files.py: whole-file writes (folder made, atomic, umask honoured, mode kept) and UTF-8 reads that name the byte."""

from __future__ import annotations

import os
import stat

import pytest

from bot.files import NotAFile, NotText, append_text, read_text, write_bytes, write_text


@pytest.fixture
def umask():
    """Set the process umask for one test, and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_missing_parent_folder_is_made(tmp_path):
    target = tmp_path / "a" / "b" / "report.json"
    write_text(target, "{}\n")
    assert target.read_text() == "{}\n"
    append_text(tmp_path / "c" / "summary.md", "one\n")
    append_text(tmp_path / "c" / "summary.md", "two\n")
    assert (tmp_path / "c" / "summary.md").read_text() == "one\ntwo\n"


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_gets_the_mode_the_umask_leaves(tmp_path, umask, mask, expected):
    umask(mask)
    write_text(tmp_path / "out.toml", "x")
    assert mode(tmp_path / "out.toml") == expected


def test_replacing_a_file_keeps_its_mode_and_leaves_no_temporary_file(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "export_skips.toml"
    target.write_text("old")
    target.chmod(0o640)
    write_text(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["export_skips.toml"]


def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")

    def refuse(src, dst):
        raise OSError(28, "No space left on device", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        write_bytes(target, b"new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_bytes_are_written_as_given(tmp_path):
    write_text(tmp_path / "crlf.toml", "[all]\r\nA = 'x'\r\n")
    assert (tmp_path / "crlf.toml").read_bytes() == b"[all]\r\nA = 'x'\r\n"
    assert read_text(tmp_path / "crlf.toml") == "[all]\r\nA = 'x'\r\n"


def test_a_file_in_the_way_of_the_folder_is_named(tmp_path):
    (tmp_path / "out").write_text("a file")
    with pytest.raises(NotADirectoryError) as raised:
        write_text(tmp_path / "out" / "deeper" / "report.json", "{}")
    assert raised.value.filename == str(tmp_path / "out" / "deeper" / "report.json")
    assert raised.value.strerror == f"cannot make its folder, {tmp_path / 'out'} is a file"


def test_a_binary_file_is_not_text_and_the_message_says_where(tmp_path):
    path = tmp_path / "selection.json"
    path.write_bytes(b'{"cells":\n[\xff]}')
    with pytest.raises(NotText) as raised:
        read_text(path)
    assert str(raised.value) == f"{path}:2: not UTF-8 text (invalid start byte at byte 11); pass a text file"


def test_write_files_writes_all_or_none(tmp_path):
    from bot.files import write_files

    (tmp_path / "old.json").write_text("old")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError):
        write_files({tmp_path / "old.json": "new", tmp_path / "new.md": "new"}, {blocker / "summary.md": "s"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "old.json"]
    assert (tmp_path / "old.json").read_text() == "old"
    write_files({tmp_path / "old.json": "new", tmp_path / "d" / "new.md": "new"}, {tmp_path / "summary.md": "s\n"})
    write_files({}, {tmp_path / "summary.md": "t\n"})
    assert (tmp_path / "old.json").read_text() == (tmp_path / "d" / "new.md").read_text() == "new"
    assert (tmp_path / "summary.md").read_text() == "s\nt\n"


def test_only_regular_files_are_read_and_at_most_the_limit(tmp_path):
    from bot.files import NotAFile, check_inputs, read_bytes

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile, match="not a regular file \\(a FIFO"):
        read_text(fifo)
    with pytest.raises(NotAFile, match="fifo: not a regular file"):
        check_inputs([tmp_path, tmp_path / "missing", fifo])
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path)
    (tmp_path / "big").write_bytes(b"x" * 11)
    assert read_bytes(tmp_path / "big", limit=11) == b"x" * 11
    with pytest.raises(NotAFile, match="larger than 10 bytes"):
        read_bytes(tmp_path / "big", limit=10)


def test_a_fifo_is_never_written_over(tmp_path):
    """A write replaces its target: a FIFO (or `/dev/null`, not tried here: a regression would replace
    it for everyone) given as an output is refused instead."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(NotAFile, match="not a regular file"):
        write_text(fifo, "x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["fifo"]
