"""Reading /proc: is a process alive, and which processes descend from it."""
from __future__ import annotations

import os
from pathlib import Path


def alive(pid: int) -> bool:
    """True if ``pid`` runs (a zombie is dead)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:  # gone before open (ENOENT) or between open and read (ESRCH)
        return False


def family(pid: int) -> list[int]:
    """``pid`` and every live descendant (some servers, like Postgres, setsid their children)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        if alive(current):
            found.append(current)
        todo.extend(children.get(current, []))
    return found
