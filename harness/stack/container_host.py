"""What a container shares with the host: folders, the interpreter's name, the kernel's /proc.

Containers of the docker backend run in the host's network and PID
namespaces, so a host pid names their main process; these helpers turn host
paths into mounts and PYTHONPATH entries, and read a container's process
from /proc without asking the engine.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence


@dataclass(frozen=True)
class Mount:
    """A host folder bind-mounted in the container (at the same path unless ``target`` says)."""

    path: str
    read_only: bool = True
    target: str | None = None


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def local_start_ticks(pid: int | None, container_id: str) -> str | None:
    """The start time of ``pid`` if it is this container's process on this kernel, else None
    (a remote engine: its pids mean nothing here)."""
    if not pid:
        return None
    try:
        if container_id not in Path(f"/proc/{pid}/cgroup").read_text():
            return None
    except OSError:
        return None
    fields = _stat(pid)
    return fields[19] if fields else None


def process_alive(pid: int | None, ticks: str) -> bool:
    """True while ``pid`` is the same process and not a zombie (a frozen one counts)."""
    fields = _stat(pid) if pid else None
    return bool(fields) and fields[19] == ticks and fields[0] != "Z"


def in_image(cmd: Sequence[str]) -> list[str]:
    """Replace the harness's interpreter (or a script beside it) by the same name on the image's PATH."""
    program, host_bin = cmd[0], Path(sys.executable).parent
    if program == sys.executable:
        program = "python"
    elif Path(program).parent == host_bin:
        program = Path(program).name
    return [program, *cmd[1:]]


def code_mounts(*folders: Path | str | None) -> list[Mount]:
    """Read-only mounts of the given folders, without ones nested in another."""
    paths = sorted({str(Path(f).resolve()) for f in folders if f})
    kept: list[str] = []
    for path in paths:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return [Mount(p) for p in kept]


def env_with_path(env: Mapping[str, str], *paths: str) -> dict[str, str]:
    """``env`` with ``paths`` appended to its PYTHONPATH (the app's own entries first)."""
    out = dict(env)
    parts = [p for p in out.get("PYTHONPATH", "").split(":") if p]
    out["PYTHONPATH"] = ":".join(parts + [p for p in paths if p not in parts])
    return out
