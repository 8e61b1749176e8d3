"""Folders only their owner can use, made without following anyone's symlinks.

Run state lives in shared places (``/tmp``, ``/dev/shm``) where any local user
can create names first. A folder is therefore made with ``mkdir`` (which never
follows a symlink in its last component), then opened with ``O_NOFOLLOW |
O_DIRECTORY`` and checked on the open descriptor: a directory, owned by us.
Its mode is set through that descriptor too, so a name swapped in between is
never chmodded. Someone else's folder under our name is an error, not
something to adopt or repair.

``group`` shares a folder with one group by traversal only (mode 0710): the
unprivileged user Postgres runs as when jobquake runs as root must reach its
data directory inside the run folder, and nobody else may.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from harness.errors import HarnessError

DEFAULT_HINT = "point TMPDIR elsewhere"
PRIVATE = 0o700
GROUP_TRAVERSE = 0o710


class UnsafeDirError(HarnessError):
    """A folder jobquake keeps private exists but is not ours (or not a folder)."""

    def __init__(self, path: Path, problem: str, hint: str = DEFAULT_HINT):
        super().__init__(f"{path}: {problem}; jobquake keeps private state there and will not "
                         f"use a folder it did not make. Remove it, or {hint}")
        self.path = path


def private_dir(path: str | os.PathLike[str], group: int | None = None, hint: str = DEFAULT_HINT) -> Path:
    """Make (or check) ``path`` as a folder owned by us with mode 0700 (0710 and ``group``).

    UnsafeDirError (ending with ``hint``, how to choose another place) when it is not ours.
    """
    path = Path(path)
    try:
        os.mkdir(path, PRIVATE)
    except FileExistsError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:  # ELOOP: a symlink; ENOTDIR: a file
        raise UnsafeDirError(path, f"not a folder ({exc.strerror})", hint) from exc
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise UnsafeDirError(path, f"owned by uid {info.st_uid}, not by this user ({os.geteuid()})", hint)
        if group is not None and info.st_gid != group:
            os.fchown(fd, -1, group)
        wanted = PRIVATE if group is None else GROUP_TRAVERSE
        if stat.S_IMODE(info.st_mode) != wanted:
            os.fchmod(fd, wanted)
    finally:
        os.close(fd)
    return path


def owned_folder(path: Path) -> bool:
    """True when ``path`` itself (not a symlink's target) is a folder owned by us."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def owned_file(path: Path) -> bool:
    """True when ``path`` itself is a regular file owned by us."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()


def read_owned(path: Path) -> str | None:
    """The text of a regular file owned by us, opened without following a symlink; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return None
        return os.read(fd, 4096).decode(errors="replace")
    finally:
        os.close(fd)
