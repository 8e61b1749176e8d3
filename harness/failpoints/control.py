"""The harness side: arm, release and disarm failpoints, and read what fired.

Every change takes the directory's lock, replaces ``armed.json`` atomically
(write a temporary file, then ``os.replace``) and only then bumps the
generation in ``state``; an application process that calls a failpoint
after ``arm()`` returned therefore sees the new arming.

The directory is the run's private channel: owned by the harness's user,
mode 0700 (or 02770 shared with one group, when app processes run as another
uid), never reached through a symlink. Whoever can write in it can arm
failpoints in the app and forge the trigger records the verdict reads, so a
directory anyone else could write to is refused.
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, cast

from harness._channel_dir import check_channel, make_channel, read_channel_file, renew_folder
from harness._wait import wait_until
from harness.errors import ConfigError, FaultError
from harness.failpoints._validate import validated
from harness.failpoints.spec import (
    ARMED_FILE, COUNTERS_DIR, ENV_VAR, GENERATION, LOCK_FILE, RELEASABLE, STATE_FILE, TRIGGERS_FILE,
)

__all__ = ["Armed", "DEFAULT_WAIT", "FailpointControl", "Table"]

Table = dict[str, dict[str, Any]]
DEFAULT_WAIT = 10.0  # seconds ``Armed.wait()`` waits when not told (as the paid API's gates do)
_RISK = "can arm failpoints and forge triggers"


class FailpointControl:
    """Arms failpoints in every process that uses the control directory at ``path``."""

    def __init__(self, path: str | os.PathLike[str], *, seed: int = 0):
        self.path = Path(path)
        self.seed = seed  # default for arm(seed=...): pass the run's seed so a run replays
        if not (self.path / STATE_FILE).is_file():
            raise ConfigError(f"{self.path} is not a failpoint control directory "
                              f"(use FailpointControl.create)", key=ENV_VAR, source=str(self.path))
        self.file_mode = check_channel(self.path, what="failpoint control directory", risk=_RISK,
                                       fix="make it with FailpointControl.create", key=ENV_VAR)

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, seed: int = 0, group: int | None = None) -> FailpointControl:
        """Make (or adopt) the directory and its files, private to this user.

        ``group``: share it with that group (app processes running as another uid
        in it); the directory is then 02770 and its files 0660.
        """
        root = Path(path)
        make_channel(root, folders=(COUNTERS_DIR,), group=group, files={
            STATE_FILE: GENERATION.pack(0), ARMED_FILE: b'{"failpoints": {}}', TRIGGERS_FILE: b"", LOCK_FILE: b""})
        return cls(root, seed=seed)

    def env(self) -> dict[str, str]:
        """Environment to give application processes so they find this directory."""
        return {ENV_VAR: str(self.path)}

    # -- arming ------------------------------------------------------------------
    def arm(self, name: str, action: str, *, once: bool = False, times: int | None = None,
            probability: float | None = None, seed: int | None = None,
            match: dict[str, Any] | None = None, **params: Any) -> Armed:
        """Arm ``name`` with ``action`` (params as keywords); replaces an earlier arming of it.

        Conditions: ``once``, ``times=n``, none (always), ``probability=p``
        (drawn per hit from ``seed``, default the control's seed), ``match``
        (context keys that must equal these values as strings). Hits are the
        calls that pass ``match``, counted across every process. A replaced
        arming's counts start over and callers it holds are let go.
        FaultError on a bad arming.
        """
        spec = validated(name, action, once=once, times=times, probability=probability,
                         seed=self.seed if seed is None else seed, match=match, params=params)

        def change(table: Table, generation: int) -> None:
            table[name] = {**spec, "arm": generation, "released": 0}

        return Armed(self, name, self._update(change))

    def release(self, name: str, *, arm: int | None = None) -> None:
        """Let go every caller held by ``name`` now (hang, exhaust_pool); it stays armed.

        With ``arm``, only if that arming is still the current one.
        """

        def change(table: Table, generation: int) -> None:
            if name not in table or arm not in (None, table[name]["arm"]):
                raise FaultError("cannot release: not armed", fault=f"failpoint {name}")
            if table[name]["action"] not in RELEASABLE:
                raise FaultError(f"cannot release a {table[name]['action']!r} action",
                                 fault=f"failpoint {name}")
            table[name]["released"] += 1

        self._update(change)

    def disarm(self, name: str, *, arm: int | None = None) -> None:
        """Disarm ``name`` (no-op if not armed, or if ``arm`` is given and was replaced).

        Callers it holds are let go.
        """

        def change(table: Table, generation: int) -> None:
            if name in table and arm in (None, table[name]["arm"]):
                del table[name]

        self._update(change)

    def disarm_all(self) -> None:
        """Disarm every failpoint, letting go every held caller."""
        self._update(lambda table, generation: table.clear())

    def reset(self) -> None:
        """Disarm everything and forget every trigger and count."""

        def change(table: Table, generation: int) -> None:
            table.clear()
            os.truncate(self.path / TRIGGERS_FILE, 0)
            renew_folder(self.path, COUNTERS_DIR)

        self._update(change)

    def armed(self) -> Table:
        """The armed table as the apps see it: name -> spec."""
        return self._read_table()

    # -- observing -----------------------------------------------------------------
    def triggers(self, name: str | None = None, *, arm: int | None = None) -> list[dict[str, Any]]:
        """Every recorded firing (of ``name``, of one arming), oldest first."""
        # only from our own file, not through a symlink: the records decide the verdict
        data = read_channel_file(self.path / TRIGGERS_FILE, what="failpoint trigger file", risk=_RISK,
                                 key=ENV_VAR)
        records = []
        for line in data.splitlines():
            if not line.endswith(b"}"):
                continue  # a line still being written
            record = json.loads(line)
            if (name is None or record["name"] == name) and (arm is None or record["arm"] == arm):
                records.append(record)
        return records

    def wait_triggered(self, name: str, *, timeout: float, count: int = 1,
                       arm: int | None = None) -> list[dict[str, Any]]:
        """Poll until ``name`` fired ``count`` times; the triggers. FaultError if a firing failed."""

        def fired() -> list[dict[str, Any]] | None:
            records = self.triggers(name, arm=arm)
            if len(records) >= count or any("error" in r for r in records):
                return records
            return None

        records = wait_until(fired, timeout=timeout, what=f"failpoint {name!r} fired {count} time(s)")
        for record in records:
            if "error" in record:
                raise FaultError(f"firing in pid {record['pid']} failed: {record['error']}",
                                 fault=f"failpoint {name}")
        return records

    # -- context manager: disarm on the way out, so no app stays hung ----------------
    def __enter__(self) -> FailpointControl:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.disarm_all()

    # -- internals -------------------------------------------------------------------
    def _update(self, change: Callable[[Table, int], Any]) -> int:
        """Apply ``change`` to the table under the lock, publish it, bump the generation."""
        with self._locked():
            generation = self._generation() + 1
            table = self._read_table()
            change(table, generation)
            tmp = self.path / f"{ARMED_FILE}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, self.file_mode)
            with os.fdopen(fd, "w") as fh:
                os.fchmod(fd, self.file_mode)
                fh.write(json.dumps({"failpoints": table}))
            os.replace(tmp, self.path / ARMED_FILE)
            fd = os.open(self.path / STATE_FILE, os.O_WRONLY)
            try:
                os.pwrite(fd, GENERATION.pack(generation), 0)  # same page the clients map
            finally:
                os.close(fd)
            return generation

    def _generation(self) -> int:
        return cast("int", GENERATION.unpack((self.path / STATE_FILE).read_bytes()[:GENERATION.size])[0])

    def _read_table(self) -> Table:
        armed = json.loads((self.path / ARMED_FILE).read_text() or "{}")
        return cast("dict[str, dict[str, Any]]", armed.get("failpoints", {}))

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.path / LOCK_FILE, "rb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


class Armed:
    """One arming of a failpoint, as returned by :meth:`FailpointControl.arm`."""

    def __init__(self, control: FailpointControl, name: str, arm: int):
        self.control = control
        self.name = name
        self.arm = arm

    def release(self) -> None:
        """Let go the callers this arming holds now; it stays armed (FaultError if healed or replaced)."""
        self.control.release(self.name, arm=self.arm)

    def heal(self) -> None:
        """Disarm this arming, letting go whom it holds (a later arming of the same name stays)."""
        self.control.disarm(self.name, arm=self.arm)

    def triggers(self) -> list[dict[str, Any]]:
        """Firings of this arming (not of earlier armings of the same name)."""
        return self.control.triggers(self.name, arm=self.arm)

    def wait(self, timeout: float | None = None, count: int = 1) -> list[dict[str, Any]]:
        """Poll until this arming fired ``count`` times; its triggers (``WaitTimeout`` at the bound)."""
        timeout = DEFAULT_WAIT if timeout is None else timeout
        return self.control.wait_triggered(self.name, timeout=timeout, count=count, arm=self.arm)

    def __repr__(self) -> str:
        return f"Armed({self.name!r}, arm={self.arm})"
