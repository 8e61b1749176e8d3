"""Find and end what a killed run left behind.

Every process jobquake starts is recorded as a pid file (pid and start time)
in the run folder of its owner: the pytest or CLI process that started it,
named ``<pid>-<start ticks>`` under ``RUNS_DIR``. A run folder whose owner is
no longer alive (or whose pid now belongs to another program, which the start
time tells apart) holds leftovers: each recorded process that is still the
same process is killed with its descendants, and the folder is removed.
Environment markers would not do: servers such as redis-server and Postgres
overwrite their environment block when they set their process title.

Throwaway data that is written hard (a session's Postgres cluster) goes to
the owner's folder under a memory root instead (``/dev/shm``, a tmpfs): on a
virtual disk, copying the cluster and creating its databases cost a second
that a tmpfs does in tens of milliseconds. Both roots are reaped alike.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

RUNS_DIR = Path(tempfile.gettempdir()) / "jobquake-runs"
# JOBQUAKE_MEMORY_DIR names the tmpfs for throwaway data; set it empty to keep everything on disk
MEMORY_DIR_ENV = "JOBQUAKE_MEMORY_DIR"
DEFAULT_MEMORY_DIR = "/dev/shm"
MEMORY_MIN_FREE = 512 * 2**20  # a container's default /dev/shm (64 MB) is too small: use the disk


def _start_ticks(pid: int) -> str | None:
    """The process start time in clock ticks (field 22 of /proc/PID/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces: split after its closing parenthesis
    return stat.rsplit(")", 1)[1].split()[19]


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
    return Path(base) / "jobquake-runs"


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
    return [RUNS_DIR, *(_memory_runs(base) for base in sorted(bases))]


def _owner_folder(root: Path) -> Path:
    try:
        root.mkdir(parents=True)
        root.chmod(0o1777)  # shared by every user's runs, like /tmp; only its creator may chmod it
    except FileExistsError:
        pass
    path = root / owner_id()
    path.mkdir(exist_ok=True)
    path.chmod(0o755)  # servers running as an unprivileged user keep data dirs inside
    return path


def run_dir() -> Path:
    """This owner's scratch folder (pid files, logs, sockets of the session)."""
    return _owner_folder(RUNS_DIR)


def memory_dir() -> Path:
    """This owner's folder for throwaway data written hard: in memory if possible, else ``run_dir()``."""
    root = memory_root()
    if root is None:
        return run_dir()
    return _owner_folder(root)


def record(pid: int) -> None:
    """Remember a process we started, so a later run can end it if we die first."""
    folder = run_dir() / "pids"
    folder.mkdir(exist_ok=True)
    (folder / str(pid)).write_text(str(_start_ticks(pid)))


def forget(pid: int) -> None:
    (run_dir() / "pids" / str(pid)).unlink(missing_ok=True)


def reap() -> list[int]:
    """End the recorded processes of dead owners and remove their folders; return the pids killed."""
    killed: list[int] = []
    folders = [f for root in _roots() if root.is_dir() for f in root.iterdir()]
    for folder in folders:
        if owner_alive(folder.name):
            continue
        for pidfile in (folder / "pids").glob("*") if (folder / "pids").is_dir() else []:
            pid = int(pidfile.name)
            if _start_ticks(pid) == pidfile.read_text().strip():
                killed.extend(_kill_family(pid))
        shutil.rmtree(folder, ignore_errors=True)
    collect(killed, leader=-1)  # those we adopted as subreaper become our zombies
    return killed


def _kill_family(pid: int) -> list[int]:
    members = family(pid)
    for member in members:
        try:
            os.kill(member, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
    return members


def remove_run_dir() -> None:
    """Delete this owner's scratch folders (once everything in them has stopped)."""
    for root in _roots():
        shutil.rmtree(root / owner_id(), ignore_errors=True)


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
