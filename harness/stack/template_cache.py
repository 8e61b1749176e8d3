"""The cached template cluster: made once, never writable by the server's user, checked before each use.

initdb costs about half a second, so one initialised data directory per
Postgres version is kept in the cache and copied for each session. When
jobquake runs as root, the server runs as the unprivileged ``postgres`` user;
a cluster that user could write would carry a planted setting
(``postgresql.conf``, ``postgresql.auto.conf``) into every later session. So
the template belongs to jobquake's user and the server's group may only read
it (folders 0750, files 0640); each session's copy is made by the server's
user and is that session's alone.

A manifest written next to the template (a SHA-256 over every entry's path,
type, mode, owner, size and modification time, and over the content of the
configuration files) is checked before each copy. Writing a file changes its
size or time, and only its owner (jobquake's user) or root may set a time
back, so a template changed since it was made is detected, removed and made
again.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable

from harness._private_dir import private_dir
from harness.stack.server_user import popen_identity, shared_gid

# Bump the layout name whenever initdb's options or the cache's rules change, so old caches are not reused.
TEMPLATE_LAYOUT = "template-wal1-ro"
MANIFEST_SUFFIX = ".manifest"
SECRET_SUFFIX = ".bootstrap"  # the template superuser's password, until a session sets its own
CONTENT_HASHED = (".conf", "PG_VERSION")  # files whose every byte is hashed: where a setting can be planted
DIR_MODE, FILE_MODE = 0o750, 0o640  # the server's group reads, nobody else; nobody but the owner writes


def cache_dir() -> Path:
    """Where the template cluster lives; root's home is closed to the unprivileged server user."""
    if "JOBQUAKE_CACHE_DIR" in os.environ:
        return Path(os.environ["JOBQUAKE_CACHE_DIR"])
    if os.geteuid() == 0:
        return Path("/var/tmp/jobquake-cache")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jobquake"


def private_cache_dir() -> Path:
    """``cache_dir()``, made ours and private (a planted cluster would run as the server user)."""
    cache = cache_dir()
    cache.parent.mkdir(parents=True, exist_ok=True)
    return private_dir(cache, shared_gid(), "set JOBQUAKE_CACHE_DIR to a folder of yours")


def manifest(root: Path) -> str:
    """The digest of a cluster folder as it is on disk (see the module's docstring)."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted([*dirs, *files]):
            path = os.path.join(folder, name)
            info = os.lstat(path)
            digest.update(f"{os.path.relpath(path, root)}\0{info.st_mode:o}\0{info.st_uid}\0{info.st_gid}\0"
                          f"{info.st_size}\0{info.st_mtime_ns}\n".encode())
            if stat.S_ISREG(info.st_mode) and name.endswith(CONTENT_HASHED):
                with open(path, "rb") as fh:
                    digest.update(hashlib.file_digest(fh, "sha256").digest())
    return digest.hexdigest()


def seal(root: Path) -> None:
    """Make a freshly initialised cluster ours, readable by the server's group only."""
    gid = shared_gid()
    for folder, dirs, files in os.walk(root):
        for name, mode in ((folder, DIR_MODE), *((os.path.join(folder, d), DIR_MODE) for d in dirs),
                           *((os.path.join(folder, f), FILE_MODE) for f in files)):
            os.lchown(name, os.geteuid(), os.getegid() if gid is None else gid)
            os.chmod(name, mode, follow_symlinks=False)


def _beside(root: Path, suffix: str) -> Path:
    return root.with_name(root.name + suffix)


def _write_private(path: Path, text: str) -> None:
    """A file only jobquake's user can read (the server's user must not learn the bootstrap password)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fd, 0o600)
        fh.write(text + "\n")


def _read_private(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd) as fh:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            return None  # not ours alone: not trusted
        return fh.read().strip()


def intact(root: Path) -> str | None:
    """The bootstrap password of ``root`` when it is a template whose manifest still matches it."""
    recorded, secret = _read_private(_beside(root, MANIFEST_SUFFIX)), _read_private(_beside(root, SECRET_SUFFIX))
    if not recorded or not secret or not (root / "PG_VERSION").exists() or recorded != manifest(root):
        return None
    return secret


def template_cluster(version: str, initdb: Callable[[Path], str]) -> tuple[Path, str, bool]:
    """The intact template of ``version``, its bootstrap password, and whether it was already there.

    Made with ``initdb(staging)`` (which returns the bootstrap password it gave) when missing or
    changed, under a lock: parallel sessions make it once."""
    cache = private_cache_dir()
    template = cache / f"pg-{version}-{TEMPLATE_LAYOUT}"
    with open(cache / f"pg-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        secret = intact(template)
        if secret is not None:
            return template, secret, True
        if template.exists():
            print(f"jobquake: the cached template cluster {template} changed since it was made; "
                  "making it again", file=sys.stderr)
            shutil.rmtree(template)
        staging = cache / f"pg-{version}-staging-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(mode=0o700)
        try:
            secret = initdb(staging)
            seal(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        os.rename(staging, template)
        _write_private(_beside(template, SECRET_SUFFIX), secret)
        _write_private(_beside(template, MANIFEST_SUFFIX), manifest(template))
        return template, secret, False


def copy_for_session(template: Path, datadir: Path, user: str | None) -> None:
    """A private copy of ``template`` at ``datadir``, owned by the server's ``user`` (0700)."""
    os.mkdir(datadir, 0o700)
    if user:
        shutil.chown(datadir, user)
    # copied by the server's user, so every file of the copy is its own (the template's stay ours)
    subprocess.run(["cp", "-r", "--preserve=mode,timestamps", f"{template}/.", str(datadir)],
                   check=True, capture_output=True, **popen_identity(user))
    os.chmod(datadir, 0o700)
