"""A folder the harness shares with the app's processes, private to the run.

The failpoint control directory and the instrumentation folder are both
written by the app's processes and read back by the harness as evidence, so
whoever else could write in them could steer the app or forge a verdict. Such
a channel is owned by the harness's user, mode 0700 with files 0600; when the
app's processes run as another uid it is shared with one group instead, 02770
(new files and folders inherit the group) with files 0660. It is never reached
through a symlink, and a channel or file another user could write to is
refused, not repaired.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Mapping

from harness._private_dir import private_dir
from harness.errors import ConfigError

OWNER_ONLY = (0o700, 0o600)  # (folder mode, file mode)
GROUP_SHARED = (0o2770, 0o660)


def modes(group: int | None) -> tuple[int, int]:
    """The folder and file modes of a channel kept to its owner, or shared with ``group``."""
    return OWNER_ONLY if group is None else GROUP_SHARED


def make_channel(root: Path, *, folders: tuple[str, ...], files: Mapping[str, bytes],
                 group: int | None) -> None:
    """Make (or adopt) ``root``, its sub``folders`` and its ``files`` (content written when empty)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    dir_mode, file_mode = modes(group)
    for directory in (root, *(root / name for name in folders)):
        private_dir(directory)
        if group is not None:
            os.chown(directory, -1, group)
        os.chmod(directory, dir_mode)
    for name, content in files.items():
        fd = os.open(root / name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, file_mode)
        try:
            if os.fstat(fd).st_size == 0 and content:
                os.write(fd, content)
            if group is not None:
                os.fchown(fd, -1, group)
            os.fchmod(fd, file_mode)
        finally:
            os.close(fd)


def check_channel(path: Path, *, what: str, risk: str, fix: str, key: str) -> int:
    """The file mode of channel ``path``; ConfigError unless it is our own folder no other user may write in.

    ``what`` names the channel, ``risk`` says what a writer could do, ``fix``
    how to make a good one; ``key`` is the setting that named the folder.
    """
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise ConfigError(f"{what} {path}: {exc.strerror}", key=key, source=str(path)) from exc
    problem = _unsafe(info, stat.S_ISDIR, "not a folder (a symlink?)")
    if problem:
        raise ConfigError(f"{what} {path} is {problem}: anyone who can write there {risk}; {fix}",
                          key=key, source=str(path))
    return GROUP_SHARED[1] if info.st_mode & stat.S_IRWXG else OWNER_ONLY[1]


def read_channel_file(path: Path, *, what: str, risk: str, key: str) -> bytes:
    """The content of ``path``, a regular file of ours no other user may write; never through a symlink.

    ConfigError otherwise, so no evidence is taken from a file someone else could have written.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:  # ELOOP: a symlink
        raise ConfigError(f"{what} {path}: {exc.strerror}", key=key, source=str(path)) from exc
    with os.fdopen(fd, "rb") as fh:
        problem = _unsafe(os.fstat(fd), stat.S_ISREG, "not a regular file")
        if problem:
            raise ConfigError(f"{what} {path} is {problem}: anyone who can write it {risk}; it is "
                              f"not read", key=key, source=str(path))
        return fh.read()


def renew_folder(root: Path, name: str) -> None:
    """Empty sub-folder ``name`` of channel ``root`` by making it anew, with the channel's mode and group."""
    # an app may be creating a file in the old one right now: harmless, it is gone with it
    shutil.rmtree(root / name, ignore_errors=True)
    (root / name).mkdir(exist_ok=True)
    os.chmod(root / name, stat.S_IMODE(os.stat(root).st_mode))


def _unsafe(info: os.stat_result, is_kind, kind_problem: str) -> str | None:
    """Why a channel item with ``info`` cannot be trusted, or None."""
    if not is_kind(info.st_mode):
        return kind_problem
    if info.st_uid != os.geteuid():
        return f"owned by uid {info.st_uid}, not by this user"
    if info.st_mode & stat.S_IRWXO:
        return f"open to every user (mode {stat.S_IMODE(info.st_mode):o})"
    return None
