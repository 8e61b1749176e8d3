"""Named mutants: each one puts a single catalogued bug back into refapp.

``REFAPP_MUTANT=name[,name...]`` switches them on for a process. The code
asks ``mutant("name")`` right where the defence lives, so reading a module
shows the right shape and its wrong twin side by side. An unknown name is an
error when the settings are read, which every entry point does at start.
``python -m refapp.mutants`` lists them; the catalogue itself is ``refapp.catalogue``.

Reach: when ``JOBQUAKE_MUTANT_REACH`` names a folder, ``mutant(name)`` also
appends ``<pid> <unix time> <name>`` to this process's file there, so that
``jobquake mutants --full`` runs a mutant only with the scenarios whose run
reaches its switch (see ``harness.mutation_reach``). A tight loop asking the
same switch writes one line per name and ``REACH_BUCKET_S`` bucket, so every
reach at time t has a line within ``REACH_BUCKET_S`` of t. The first line of
a process, ``<pid> <time> @start``, dates the start of its program; a child
forked without exec (a Celery pool process) writes ``<pid> <time> @fork``
instead: what it knows from start-up is its parent's, already recorded.

Where the code can tell, it asks a switch only once the mutant's answer
would change what happens: ``if candidates and mutant("no-sweeper")``, the
retry switch after a call has timed out, the unfenced write after the fenced
one was refused. Asking is what counts as reach, so a scenario whose run
never gets to that point is not paired with the mutant: it would run the
same code either way. The wrong shape must stay the same bug: it may take a
decision late, never differently.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from refapp import settings
from refapp.catalogue import ENV_VAR, MUTANTS, UnknownMutant, parse

__all__ = ["ENV_VAR", "MUTANTS", "UnknownMutant", "main", "mutant", "parse"]

REACH_ENV = "JOBQUAKE_MUTANT_REACH"
REACH_BUCKET_S = 1.0


def _program_start() -> float:
    """When this process's program started (unix time): /proc's start tick, else now (at import)."""
    try:
        ticks = float(open(f"/proc/{os.getpid()}/stat").read().rsplit(")", 1)[1].split()[19])
        boot = next(float(line.split()[1]) for line in open("/proc/stat") if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()


class _Reach:
    """This process's reach file: one line per (name, bucket); reopened after a fork (a new pid)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.start = _program_start()
        self.forked = False  # set in a child forked from this process
        self.pid = -1
        self.fd = -1
        self.seen: dict[str, int] = {}
        self.lock = threading.Lock()

    def note(self, name: str) -> None:
        now = time.time()
        bucket = int(now // REACH_BUCKET_S)
        if self.pid != os.getpid():  # first use, or a forked child: its own file
            with self.lock:
                if self.pid != os.getpid():
                    path = os.path.join(self.folder, f"{os.getpid()}.reach")
                    self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                    self.pid, self.seen = os.getpid(), {}
                    self._write(now, "@fork") if self.forked else self._write(self.start, "@start")
        if self.seen.get(name) != bucket:
            self.seen[name] = bucket
            self._write(now, name)

    def _write(self, when: float, name: str) -> None:
        os.write(self.fd, f"{self.pid} {when:.3f} {name}\n".encode())  # one O_APPEND write: whole lines


_reach = _Reach(os.environ[REACH_ENV]) if os.environ.get(REACH_ENV) else None


def _forked() -> None:
    """In a child forked without exec: a lock another thread held at the fork stays held, so a new one."""
    _reach.lock, _reach.forked = threading.Lock(), True


if _reach is not None and hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def mutant(name: str) -> bool:
    """True when mutant ``name`` is switched on in this process."""
    if name not in MUTANTS:  # a typo here would silently keep the right shape
        raise KeyError(f"refapp defines no mutant {name!r}")
    if _reach is not None:
        _reach.note(name)
    return name in settings.get().mutants


def main() -> int:
    """Print every mutant and what it breaks."""
    width = max(map(len, MUTANTS))
    for name, description in MUTANTS.items():
        print(f"{name:<{width}}  {description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
