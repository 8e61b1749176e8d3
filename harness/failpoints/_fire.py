"""The slow path, taken only for a name that is armed: match, count, decide, record, act.

Counting is shared by every process that uses the control directory: the
hit and firing counts of one arming live in ``counters/<arm>`` and are read
and updated under an exclusive ``flock``, so two processes never both take a
``once``. The file is opened afresh for each evaluation: flock belongs to
the open file description, which a forked child would share with its
parent, so a cached descriptor would let parent and child count at once.

The probability draw for the n-th hit depends only on (seed, name, n), so a
run replays the same firings whichever process makes which hit.
"""
from __future__ import annotations

import fcntl
import json
import os
import random
import time
from typing import Any

from harness.errors import FaultError
from harness.failpoints import actions
from harness.failpoints._state import ClientState
from harness.failpoints.spec import COUNTERS_DIR, COUNTS, TRIGGERS_FILE, Spec


def fire(client: ClientState, name: str, context: dict[str, Any]) -> Any:
    """Evaluate the armed failpoint ``name`` for one call; run its action if it fires."""
    spec = client.specs.get(name)
    if spec is None or not matches(spec, context):
        return None
    fd = _open_counter(client.path, spec.arm)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        hits, fired = _read_counts(fd)
        hits += 1
        go = decide(spec, hits, fired)
        os.pwrite(fd, COUNTS.pack(hits, fired + go), 0)
        if not go:
            return None
        try:
            run = actions.prepare(client, spec, context)
        except FaultError as exc:
            _record(client.path, spec, context, hits, error=str(exc))
            raise
        # recorded under the lock, so one arming's triggers appear in hit order
        _record(client.path, spec, context, hits)
    finally:
        os.close(fd)  # releases the flock
    return run()


def matches(spec: Spec, context: dict[str, Any]) -> bool:
    """True when every key of the arming's ``match`` is in ``context`` with an equal string value."""
    if not spec.match:
        return True
    return all(key in context and str(context[key]) == value for key, value in spec.match.items())


def decide(spec: Spec, hit: int, fired: int) -> bool:
    """Whether the ``hit``-th matching call fires, given ``fired`` earlier firings."""
    if spec.times is not None and fired >= spec.times:
        return False
    if spec.probability is not None:
        return draw(spec.seed, spec.name, hit) < spec.probability
    return True


def draw(seed: int, name: str, hit: int) -> float:
    """A uniform number in [0, 1) fixed by (seed, name, hit); str seeds hash the same in every process."""
    return random.Random(f"{seed}:{name}:{hit}").random()


def _open_counter(path: str, arm: int) -> int:
    counter = os.path.join(path, COUNTERS_DIR, str(arm))
    # 0660: where the channel is shared with the app's group (02770), the group counts here too;
    # where it is private (0700), nobody else reaches the file anyway
    return os.open(counter, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o660)


def _read_counts(fd: int) -> tuple[int, int]:
    data = os.pread(fd, COUNTS.size, 0)
    return COUNTS.unpack(data) if len(data) == COUNTS.size else (0, 0)


def _record(path: str, spec: Spec, context: dict[str, Any], hit: int, error: str | None = None) -> None:
    record: dict[str, Any] = {
        "name": spec.name, "context": context, "action": spec.action, "pid": os.getpid(),
        "t": time.monotonic(), "wall": time.time(), "hit": hit, "arm": spec.arm,
    }
    if error is not None:
        record["error"] = error
    line = (json.dumps(record, default=str) + "\n").encode()
    fd = os.open(os.path.join(path, TRIGGERS_FILE), os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        os.write(fd, line)  # one write with O_APPEND: lines from many processes never interleave
    finally:
        os.close(fd)
