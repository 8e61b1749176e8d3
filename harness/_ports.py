"""Free loopback ports that xdist workers and parallel runs never share.

Ports come from below Linux's ephemeral range (32768+), so an outgoing
connection can never take a port between the moment we pick it and the
moment the service binds it. Each chosen port is claimed with an flock on a
file that the claiming process holds for its lifetime, so two pytest
processes never pick the same one. The lock files are private to the user
(a 0700 folder per uid), so another user can neither hold nor plant our
claims; two users' runs may rarely pick the same port before either binds it,
and the loser's service then exits at once and is reported as such.

A released claim removes its lock file, and the first claim of a process
sweeps the files no live process holds (left by a process that ended
without releasing), so the folder holds only the claims of running
processes. A lock is only trusted while its file is still the one at its
path: a claim that raced a removal tries again.
"""
from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

from harness._private_dir import private_dir

HOST = "127.0.0.1"
PORT_RANGE = (20000, 32000)
# one folder per user, private: another user cannot hold or plant our claims
LOCK_DIR = Path(tempfile.gettempdir()) / f"jobquake-ports-{os.geteuid()}"

_held: dict[int, int] = {}  # port -> fd of its lock file, kept open to keep the claim
_swept = False


def _lock_path(port: int) -> Path:
    return LOCK_DIR / f"{port}.lock"


def _still_there(fd: int, path: Path) -> bool:
    """True when ``path`` is still the file ``fd`` locked (not removed or replaced since it was opened)."""
    try:
        return os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _lock(path: Path) -> int | None:
    """An fd holding an exclusive lock on ``path`` (made if missing), or None when someone holds it."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    if not _still_there(fd, path):  # removed by its releaser or a sweep since we opened it
        os.close(fd)
        return None
    return fd


def sweep_stale_locks() -> int:
    """Remove the lock files nobody holds (their process ended without releasing them); how many."""
    removed = 0
    for path in LOCK_DIR.glob("*.lock"):
        try:
            fd = _lock(path)
        except OSError:
            continue  # not a regular file of ours (ELOOP): left alone
        if fd is not None:
            path.unlink(missing_ok=True)
            os.close(fd)
            removed += 1
    return removed


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _claim(port: int) -> bool:
    global _swept
    private_dir(LOCK_DIR)
    if not _swept:
        _swept = True
        sweep_stale_locks()
    fd = _lock(_lock_path(port))
    if fd is None:
        return False
    _held[port] = fd
    return True


def free_port(rng: random.Random | None = None) -> int:
    """Return a loopback port nobody listens on and no other jobquake process holds."""
    rng = rng or random.SystemRandom()
    for _ in range(500):
        port = rng.randrange(*PORT_RANGE)
        if port in _held:
            continue
        if _claim(port):
            if _bindable(port):
                return port
            release_port(port)
    raise OSError(f"no free port in {PORT_RANGE} on {HOST} after 500 tries")


def release_port(port: int) -> None:
    """Give a claimed port back (its service has stopped), removing its lock file."""
    fd = _held.pop(port, None)
    if fd is not None:
        if _still_there(fd, _lock_path(port)):
            _lock_path(port).unlink(missing_ok=True)  # still locked: nobody can claim it in between
        os.close(fd)
