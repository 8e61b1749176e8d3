"""Where a session keeps its evidence: a folder of its own under an artifacts folder nobody else can change.

Evidence decides a verdict, so it gets the rules of run state. The artifacts
folder (``--jobquake-artifacts``, default ``.jobquake/artifacts``) is made
private (0700) or, when it exists, must be a folder (not a symlink) of this
user that no other user may write (its group may, when the group holds only
this user); every folder above it must belong to this user or root and be
writable by nobody else, unless sticky
(as ``/tmp``, where nobody may rename what is ours). A shared place is
refused with one line saying why: its owner could swap the evidence, or plant
a symlink where a file will be written.

Each pytest session (all its xdist workers) writes into its own folder,
``<artifacts>/<YYYYmmdd-HHMMSS>-<pid>``, so two sessions in one checkout
never share a file; ``<artifacts>/latest`` names the newest. ``jobquake
report`` and ``jobquake merge`` read a path through ``latest``
(``through_latest``).
"""
from __future__ import annotations

import grp
import os
import pwd
import secrets
import stat
import time
from pathlib import Path

from harness._safe_files import folder_status
from harness.errors import ConfigError

LATEST = "latest"
NEW_FOLDER = 0o700


class ArtifactsFolderError(ConfigError):
    """The artifacts folder is somewhere another user could change the evidence."""

    def __init__(self, path: Path, problem: str):
        super().__init__(f"artifacts folder {path}: {problem}; jobquake keeps evidence only where no other user "
                         f"can change it: choose another --jobquake-artifacts (or jobquake_artifacts)", key="artifacts")
        self.path = path


def session_id() -> str:
    """A name for this session's folder: when it started, and which process started it."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


def _check_ancestors(folder: Path, root: Path) -> None:
    """Every folder from ``/`` down to ``folder`` (symlinks resolved) is root's or ours, and writable
    by nobody else unless sticky; ``root``: the artifacts folder asked for, which errors name."""
    me = os.geteuid()
    for ancestor in [folder, *folder.parents]:
        info = os.stat(ancestor)
        if info.st_uid not in (0, me):
            raise ArtifactsFolderError(root, f"{ancestor} belongs to uid {info.st_uid}, who could move it")
        writers = _other_writers(info)
        if writers and not info.st_mode & stat.S_ISVTX:
            where = "it" if ancestor == root else f"the folder above it, {ancestor},"
            raise ArtifactsFolderError(root, f"{where} is writable by {writers} "
                                             f"(mode {stat.S_IMODE(info.st_mode):o})")


def _other_writers(info: os.stat_result) -> str | None:
    """Who besides this user (and root) may write a folder of this status, or None.

    A folder writable by its group is private still when the group holds nobody else: a user-private
    group, as Debian and Ubuntu give every user (umask 002 makes checkouts 0775).
    """
    if info.st_mode & stat.S_IWOTH:
        return "every user"
    if info.st_mode & stat.S_IWGRP and _group_has_others(info.st_gid):
        return f"the other members of group {_group_name(info.st_gid)}"
    return None


def _group_has_others(gid: int) -> bool:
    me = os.geteuid()
    try:
        members = set(grp.getgrgid(gid).gr_mem)
    except KeyError:  # a group with no name: nobody can say who is in it
        return True
    users = pwd.getpwall()
    if members - {entry.pw_name for entry in users if entry.pw_uid in (me, 0)}:
        return True
    return any(entry.pw_gid == gid and entry.pw_uid not in (me, 0) for entry in users)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _make_parents(folder: Path) -> None:
    missing = [p for p in [folder, *folder.parents] if not p.exists()]
    for path in reversed(missing):
        try:
            os.mkdir(path, NEW_FOLDER)
        except FileExistsError:
            pass


def checked_root(path: str | os.PathLike[str]) -> Path:
    """The artifacts folder, made private if missing; ``ArtifactsFolderError`` when it is not safe."""
    root = Path(os.path.abspath(path))
    nearest = next(p for p in root.parents if p.exists())  # checked before anything is made below it
    _check_ancestors(Path(os.path.realpath(nearest)), root)
    _make_parents(root.parent)
    try:
        os.mkdir(root, NEW_FOLDER)
    except FileExistsError:
        pass
    try:
        info = folder_status(root)
    except OSError as exc:
        raise ArtifactsFolderError(root, f"not a folder ({exc.strerror})") from exc
    if info.st_uid != os.geteuid():
        raise ArtifactsFolderError(root, f"it belongs to uid {info.st_uid}")
    writers = _other_writers(info)
    if writers:
        raise ArtifactsFolderError(root, f"it is writable by {writers} (mode {stat.S_IMODE(info.st_mode):o})")
    return root


def session_folder(root: Path, name: str, *, newest: bool) -> Path:
    """``root/name``, this session's folder (made, or checked when a worker of the session comes second);
    ``newest``: point ``root/latest`` at it."""
    folder = root / name
    try:
        os.mkdir(folder, NEW_FOLDER)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise ArtifactsFolderError(folder, "the session's folder exists and is not ours")
    if newest:
        _point_latest(root, name)
    return folder


def _point_latest(root: Path, name: str) -> None:
    """Replace ``root/latest`` with a symlink to ``name`` in one step (readers see the old or the new)."""
    link = root / LATEST
    if link.exists() and not link.is_symlink():
        return  # a real folder of that name: left alone, reports find the sessions by name
    temporary = root / f".{LATEST}-{secrets.token_hex(4)}"
    os.symlink(name, temporary)
    os.replace(temporary, link)


def through_latest(path: str | os.PathLike[str]) -> Path:
    """``path``, or where it is now that sessions keep their own folders: the newest session's copy
    (``<artifacts>/latest/...``) of a path given as if there were none, or ``path/latest``."""
    path = Path(path)
    if (path / LATEST).is_symlink() and not any(path.glob("*.jsonl")):
        return path / LATEST
    if path.exists():
        return path
    for ancestor in path.parents:
        if (ancestor / LATEST).is_symlink():
            candidate = ancestor / LATEST / path.relative_to(ancestor)
            if candidate.exists():
                return candidate
    return path
