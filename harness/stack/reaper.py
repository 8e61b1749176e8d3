"""Find and end what a killed run left behind.

Every process jobquake starts is recorded as a pid file (its start time and
owner uid) in the run folder of its owner: the pytest or CLI process that
started it, named ``<pid>-<start ticks>`` under this user's root of run
folders. A run folder whose owner is no longer alive (or whose pid now belongs
to another program, which the start time tells apart) holds leftovers: each
recorded process that is still the same process, with the same owner, is
killed with its descendants, and the folder is removed. Environment markers
would not do: servers such as redis-server and Postgres overwrite their
environment block when they set their process title.

Run state is private: one root per user (``/tmp/jobquake-runs-<uid>``), mode
0700, made and checked without following symlinks (``harness._private_dir``).
The reaper looks only in this user's roots, only at folders and files owned by
this user, never through a symlink. When jobquake runs as root, the roots and
run folders are shared with the group of the unprivileged server user by
traversal only (0710), so Postgres reaches its data directory and nobody else
does.

Throwaway data that is written hard (a session's Postgres cluster) goes to
the owner's folder under a memory root instead (``/dev/shm``, a tmpfs): on a
virtual disk, copying the cluster and creating its databases cost a second
that a tmpfs does in tens of milliseconds. Unix sockets go where their path
fits in 107 bytes (the memory root, the run folder, or else a root under
``/tmp`` whatever ``TMPDIR`` says). Every root is reaped alike.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from harness._private_dir import owned_folder, private_dir, read_owned
from harness.stack.server_user import shared_gid

ROOT_NAME = f"jobquake-runs-{os.geteuid()}"
RUNS_DIR = Path(tempfile.gettempdir()) / ROOT_NAME
# JOBQUAKE_MEMORY_DIR names the tmpfs for throwaway data; set it empty to keep everything on disk
MEMORY_DIR_ENV = "JOBQUAKE_MEMORY_DIR"
DEFAULT_MEMORY_DIR = "/dev/shm"
MEMORY_MIN_FREE = 512 * 2**20  # a container's default /dev/shm (64 MB) is too small: use the disk
SOCKET_PATH_MAX = 107  # a Unix socket's path fills sun_path, 108 bytes with its closing NUL
SHORT_ROOT = Path("/tmp") / f"jobquake-sockets-{os.geteuid()}"  # for sockets when TMPDIR is too deep


def _stat_fields(pid: int) -> list[str] | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces: split after its closing parenthesis
    return stat.rsplit(")", 1)[1].split()


def _start_ticks(pid: int) -> str | None:
    """The process start time in clock ticks (field 22 of /proc/PID/stat)."""
    fields = _stat_fields(pid)
    return fields[19] if fields else None


def _uid_of(pid: int) -> int | None:
    """The real uid of a process (the ``Uid:`` line of /proc/PID/status)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def owner_id(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{pid}-{_start_ticks(pid)}"


def owner_alive(owner: str) -> bool:
    pid_text, _, ticks = owner.partition("-")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    return _start_ticks(pid) == ticks


def _memory_runs(base: str) -> Path:
    return Path(base) / ROOT_NAME


def memory_root() -> Path | None:
    """The root of run folders in memory, or None when there is no roomy tmpfs to use."""
    base = os.environ.get(MEMORY_DIR_ENV, DEFAULT_MEMORY_DIR)
    if not base:
        return None
    try:
        fs = os.statvfs(base)
    except OSError:
        return None
    if fs.f_bavail * fs.f_frsize < MEMORY_MIN_FREE:
        return None
    return _memory_runs(base)


def _roots() -> list[Path]:
    """Every root a run folder may be under: reaping must not depend on whether a tmpfs is
    roomy now (leftover clusters may be what fills it), nor on this run's setting."""
    bases = {DEFAULT_MEMORY_DIR, os.environ.get(MEMORY_DIR_ENV) or DEFAULT_MEMORY_DIR}
    return [RUNS_DIR, SHORT_ROOT, *(_memory_runs(base) for base in sorted(bases))]


def _owner_folder(root: Path, hint: str) -> Path:
    group = shared_gid()  # the server user traverses to its data dir; nobody else enters
    private_dir(root, group, hint)
    return private_dir(root / owner_id(), group, hint)


def run_dir() -> Path:
    """This owner's scratch folder (pid files, logs, sockets of the session)."""
    return _owner_folder(RUNS_DIR, "point TMPDIR elsewhere")


def memory_dir() -> Path:
    """This owner's folder for throwaway data written hard: in memory if possible, else ``run_dir()``."""
    root = memory_root()
    if root is None:
        return run_dir()
    return _owner_folder(root, f"set {MEMORY_DIR_ENV} to another tmpfs (empty: keep it on disk)")


def socket_dir(longest_name: int = 24) -> Path:
    """This owner's folder for Unix sockets: the first of the memory folder and the run folder in
    which a socket name of ``longest_name`` bytes fits, else one under ``SHORT_ROOT``."""
    for folder in (memory_dir, run_dir):
        path = folder()
        if len(os.fsencode(path)) + 1 + longest_name <= SOCKET_PATH_MAX:
            return path
    return _owner_folder(SHORT_ROOT, "set TMPDIR to a shorter folder")


def record(pid: int) -> None:
    """Remember a process we started (start time, uid), so a later run can end it if we die first."""
    folder = private_dir(run_dir() / "pids")
    fd = os.open(folder / str(pid), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, f"{_start_ticks(pid)} {_uid_of(pid)}".encode())
    finally:
        os.close(fd)


def forget(pid: int) -> None:
    (run_dir() / "pids" / str(pid)).unlink(missing_ok=True)


def recorded_pids(folder: Path) -> list[int]:
    """The pids recorded in a run folder (for tests and diagnostics)."""
    pids = folder / "pids"
    if not owned_folder(pids):
        return []
    return sorted(int(p.name) for p in pids.iterdir() if p.name.isdigit())


def _same_process(pidfile: Path) -> int | None:
    """The pid a pid file names, if that pid is still the recorded process (start time and uid)."""
    if not pidfile.name.isdigit():
        return None
    content = read_owned(pidfile)
    if content is None:
        return None
    pid = int(pidfile.name)
    ticks, _, uid = content.strip().partition(" ")
    if not uid.isdigit() or _start_ticks(pid) != ticks or _uid_of(pid) != int(uid):
        return None
    return pid


def _reapable(folder: Path) -> bool:
    return owned_folder(folder) and not owner_alive(folder.name)


def reap() -> list[int]:
    """End the recorded processes of dead owners and remove their folders; return the pids killed.

    Only this user's roots, folders and pid files count; a symlink or anything
    owned by someone else is left alone.
    """
    killed: list[int] = []
    for root in _roots():
        if not owned_folder(root):
            continue
        for folder in list(root.iterdir()):
            if _reapable(folder):
                killed.extend(_end_recorded(folder))
    collect(killed, leader=-1)  # those we adopted as subreaper become our zombies
    return killed


def _end_recorded(folder: Path) -> list[int]:
    """Kill every process recorded in ``folder`` that is still the recorded one, then remove the folder."""
    killed: list[int] = []
    pids = folder / "pids"
    for pidfile in list(pids.iterdir()) if owned_folder(pids) else []:
        pid = _same_process(pidfile)
        if pid is not None:
            killed.extend(_kill_family(pid))
    shutil.rmtree(folder, ignore_errors=True)  # rmtree never follows symlinks
    return killed


def _kill_family(pid: int) -> list[int]:
    members = family(pid)
    for member in members:
        try:
            os.kill(member, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    return members


def remove_run_dir() -> list[int]:
    """Delete this owner's scratch folders; return the pids of processes that were still running.

    After a clean stop there are none: a stopped process is forgotten. One
    still recorded and alive was lost track of (a stop cut short by a signal,
    or a bug): it is ended here, with its descendants, rather than left to
    outlive the run with nothing left to name it.
    """
    killed: list[int] = []
    for root in _roots():
        folder = root / owner_id()
        if owned_folder(folder):
            killed.extend(_end_recorded(folder))
    collect(killed, leader=-1)
    if killed:
        print(f"jobquake: ended {len(killed)} process(es) still running when the run's folder was removed "
              f"(pids {', '.join(map(str, killed))})", file=sys.stderr)
    return killed


def family(pid: int) -> list[int]:
    """``pid`` and all its descendants, alive now (servers like Postgres setsid their children,
    so a process group does not name them all)."""
    children: dict[int, list[int]] = {}
    for child, _state, ppid, _sid in _children():
        children.setdefault(ppid, []).append(child)
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def collect(pids: list[int], leader: int, timeout: float = 5.0) -> None:
    """Wait until ``pids`` have died, then reap those that became our children.

    When a group is killed, its leader's children are re-parented to us (we are
    their subreaper). The leader itself is left to its Popen object: stealing
    its exit status would make a crash look like a clean exit.
    """
    wanted = set(pids) - {leader}
    me = os.getpid()
    deadline = time.monotonic() + timeout
    while True:
        states = {pid: (state, ppid) for pid, state, ppid, _sid in _children() if pid in wanted}
        if all(state == "Z" for state, _ppid in states.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    for pid, (state, ppid) in states.items():
        if state == "Z" and ppid == me:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _children() -> list[tuple[int, str, int, int]]:
    """(pid, state, ppid, session id) of every process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found.append((int(entry.name), fields[0], int(fields[1]), int(fields[3])))
    return found


PR_SET_CHILD_SUBREAPER = 36
_subreaper = False


def adopt_orphans() -> None:
    """Become the subreaper of our descendants.

    When a process group is SIGKILLed, the children of its leader are
    re-parented; without this they go to PID 1, which in a container may
    never reap them, and they linger as zombies.
    """
    global _subreaper
    if _subreaper:
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
