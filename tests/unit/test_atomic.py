"""module_utils/atomic.atomic_write: the collection's one atomic file write."""

from __future__ import annotations

import os

import pytest

from ansible_collections.kubeops.kops.plugins.module_utils.atomic import atomic_write


def test_bytes_text_and_a_fill_function_with_the_mode_and_new_directories(tmp_path):
    atomic_write(str(tmp_path / "a" / "b" / "bytes"), 0o600, b"\x00data")
    atomic_write(str(tmp_path / "text"), 0o644, "k\u00e9y: v\n")
    atomic_write(str(tmp_path / "filled"), 0o755, lambda handle: handle.write(b"#!/bin/sh\n"))
    assert (tmp_path / "a" / "b" / "bytes").read_bytes() == b"\x00data"
    assert (tmp_path / "text").read_text(encoding="utf-8") == "k\u00e9y: v\n"
    assert (tmp_path / "filled").read_bytes() == b"#!/bin/sh\n"
    assert [os.stat(tmp_path / n).st_mode & 0o7777 for n in ("a/b/bytes", "text", "filled")] == [0o600, 0o644, 0o755]
    atomic_write(str(tmp_path / "private" / "config"), 0o600, b"x", dir_mode=0o700)
    assert os.stat(tmp_path / "private").st_mode & 0o777 == 0o700


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "config"
    atomic_write(str(target), 0o644, b"old")

    def fail(handle):
        handle.write(b"half")
        raise RuntimeError("cut off")
    with pytest.raises(RuntimeError):
        atomic_write(str(target), 0o644, fail)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config"]


def test_a_replaced_file_is_a_new_inode(tmp_path):
    """A running binary (or an open reader) keeps the old content."""
    target = tmp_path / "binary"
    atomic_write(str(target), 0o755, b"v1")
    with open(target, "rb") as reader:
        atomic_write(str(target), 0o755, b"v2")
        assert reader.read() == b"v1"
    assert target.read_bytes() == b"v2"
