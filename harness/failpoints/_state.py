"""The application's view of a control directory: a generation counter in shared memory.

The ``state`` file is mapped read-only; its first 8 bytes are a generation
counter that the harness bumps after every change to ``armed.json``. A
client compares the counter with the value it saw last (one memoryview index
and one int compare) and rereads ``armed.json`` only when it moved. The
harness writes the file first and bumps the counter second; a client reads
the counter first and the file second, so a client never caches a new
counter with an old file.
"""
from __future__ import annotations

import mmap
import os
import threading
import time

from harness.failpoints.spec import ARMED_FILE, ENV_VAR, GENERATION, STATE_FILE, Spec, parse_armed

_UNOPENED = (-1,)  # stands in for the mapping until first use; never equals a real generation
RELEASE_POLL = 0.005  # seconds between looks while a hang or a held pool waits for release

_refresh_lock = threading.Lock()
_fork_hook_installed = False


def _renew_lock_after_fork() -> None:
    # a thread of the parent may have held the lock at fork time; the child has no such thread
    global _refresh_lock
    _refresh_lock = threading.Lock()


class ClientState:
    """Cached armed table of one control directory, refreshed when the generation moves.

    Creating one does no I/O: the mapping opens on first use, so an app may
    import its failpoints before the harness has created the directory.
    The fast path reads ``view``, ``generation`` and ``names`` without a lock;
    ``refresh`` stores ``names`` before ``generation``, so a reader that sees
    the new generation also sees the new names.
    """

    __slots__ = ("path", "view", "generation", "names", "specs", "_mm")

    def __init__(self, path: str):
        global _fork_hook_installed
        self.path = os.fspath(path)
        self.view = _UNOPENED
        self.generation: int | None = None
        self.names: frozenset[str] = frozenset()
        self.specs: dict[str, Spec] = {}
        self._mm: mmap.mmap | None = None
        if not _fork_hook_installed:
            os.register_at_fork(after_in_child=_renew_lock_after_fork)
            _fork_hook_installed = True

    def _open(self) -> None:
        from harness.errors import ConfigError

        state = os.path.join(self.path, STATE_FILE)
        try:
            fd = os.open(state, os.O_RDONLY)
        except OSError as exc:
            raise ConfigError(f"failpoint control directory {self.path!r} is not usable: {exc}",
                              key=ENV_VAR, source=state) from exc
        try:
            # MAP_SHARED: the harness's writes show up here with no syscall on our side,
            # in forked children too, and across containers that bind-mount the directory
            self._mm = mmap.mmap(fd, GENERATION.size, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)
        self.view = memoryview(self._mm).cast("Q")  # native order: only compared for equality

    def refresh(self) -> None:
        """Reread ``armed.json`` after the generation moved (or on first use)."""
        with _refresh_lock:
            if self._mm is None:
                self._open()
            generation = self.view[0]
            if generation == self.generation:
                return  # another thread refreshed while we waited for the lock
            try:
                with open(os.path.join(self.path, ARMED_FILE), "rb") as fh:
                    specs = parse_armed(fh.read())
            except FileNotFoundError:
                specs = {}
            self.specs = specs
            self.names = frozenset(specs)
            self.generation = generation

    def current(self, name: str) -> Spec | None:
        """The spec armed under ``name`` now (refreshing first if the harness changed anything)."""
        if self.view[0] != self.generation:
            self.refresh()
        return self.specs.get(name)

    def wait_released(self, spec: Spec, timeout: float | None) -> bool:
        """Block until the harness releases or disarms this arming, or ``timeout`` passes.

        Returns True when released, False on timeout. Re-arming the name
        counts as a release of the old arming.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            now = self.current(spec.name)
            if now is None or now.arm != spec.arm or now.released > spec.released:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(RELEASE_POLL)
