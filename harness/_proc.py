"""Which processes descend from which, read from ``/proc``: which worker holds a call, who a fault froze."""
from __future__ import annotations

import os
from pathlib import Path


def _parents() -> dict[int, int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:  # the command may hold spaces and parentheses: split after the last ")"
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended while we looked
            parents[int(entry)] = int(fields[1])
    return parents


def process_tree(pid: int) -> list[int]:
    """``pid`` and every live descendant of it (``pid`` first)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found
