"""Private folders: made 0700 (or 0710 for one group), never through a symlink, never someone else's."""
from __future__ import annotations

import os
import stat

import pytest

from harness._private_dir import UnsafeDirError, owned_folder, private_dir, read_owned


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_new_folder_is_0700_and_a_loose_one_of_ours_is_tightened(tmp_path):
    assert mode(private_dir(tmp_path / "new")) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o1777)
    assert mode(private_dir(loose)) == 0o700


def test_a_group_gets_traversal_only(tmp_path):
    folder = private_dir(tmp_path / "shared", group=os.getegid())
    assert mode(folder) == 0o710 and os.stat(folder).st_gid == os.getegid()


def test_a_symlink_or_a_file_in_the_way_is_refused_and_left_alone(tmp_path):
    target = tmp_path / "target"
    target.mkdir(mode=0o755)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(UnsafeDirError, match="not a folder"):
        private_dir(tmp_path / "link")
    assert mode(target) == 0o755
    (tmp_path / "file").write_text("")
    with pytest.raises(UnsafeDirError, match="not a folder"):
        private_dir(tmp_path / "file")


def test_owned_checks_do_not_follow_symlinks(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "flink").symlink_to(tmp_path / "real" / "f")
    assert owned_folder(tmp_path / "real") and not owned_folder(tmp_path / "link")
    assert read_owned(tmp_path / "real" / "f") == "x" and read_owned(tmp_path / "flink") is None
