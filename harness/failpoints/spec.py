"""What both sides of the control directory agree on: file layout, the armed-spec record, actions.

The harness writes ``armed.json`` as ``{"failpoints": {name: spec}}``; an
application process reads it back into :class:`Spec` objects. This module is
imported by the application on its first look at the control directory, so
it uses plain classes (no dataclasses, which would pull in ``inspect``).
"""
from __future__ import annotations

import struct
from typing import Any

ENV_VAR = "JOBQUAKE_FAILPOINTS_DIR"

STATE_FILE = "state"  # fixed header, mmap'd read-only by clients
ARMED_FILE = "armed.json"  # the armed failpoints, replaced atomically
TRIGGERS_FILE = "triggers.jsonl"  # one JSON line per firing, appended with O_APPEND
COUNTERS_DIR = "counters"  # one small file per arming: hits and firings, under flock
LOCK_FILE = "control.lock"  # serialises harness-side updates

GENERATION = struct.Struct("<Q")  # the whole state header: a little-endian u64
COUNTS = struct.Struct("<QQ")  # counter file: hits, firings

# action -> {param: (accepted types, required)}; ``object`` accepts any JSON value
ACTIONS: dict[str, dict[str, tuple[tuple[type, ...], bool]]] = {
    "raise": {"exception": ((str,), True), "message": ((str,), False), "args": ((list,), False)},
    "sleep": {"seconds": ((int, float), True)},
    "hang": {"timeout": ((int, float), False)},
    "kill": {"group": ((bool,), False)},
    "exhaust_pool": {"resource": ((str,), False), "timeout": ((int, float), False)},
    "callback": {"callback": ((str,), True), "kwargs": ((dict,), False)},
    "return": {"value": ((object,), False)},
}
RELEASABLE = frozenset({"hang", "exhaust_pool"})
DEFAULT_POOL_RESOURCE = "db_engine"


class Spec:
    """One armed failpoint as a client sees it.

    ``arm`` identifies this arming (it names the counter file, so re-arming a
    name starts its counts over); ``released`` grows by one per ``release()``.
    ``times`` None means always; ``match`` values are compared as strings.
    """

    __slots__ = ("name", "action", "params", "arm", "times", "probability", "seed", "match", "released")

    def __init__(self, name: str, action: str, params: dict[str, Any], *, arm: int,
                 times: int | None = None, probability: float | None = None, seed: int = 0,
                 match: dict[str, str] | None = None, released: int = 0):
        self.name = name
        self.action = action
        self.params = params
        self.arm = arm
        self.times = times
        self.probability = probability
        self.seed = seed
        self.match = match
        self.released = released

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> Spec:
        return cls(name, data["action"], data.get("params") or {}, arm=data["arm"],
                   times=data.get("times"), probability=data.get("probability"),
                   seed=data.get("seed", 0), match=data.get("match"),
                   released=data.get("released", 0))

    def __repr__(self) -> str:
        return f"Spec({self.name!r}, {self.action!r}, arm={self.arm}, times={self.times})"


def parse_armed(text: str | bytes) -> dict[str, Spec]:
    """Decode the content of ``armed.json``; an empty file means nothing is armed."""
    import json  # only processes that look at a control directory pay for json

    if not text:
        return {}
    table = json.loads(text).get("failpoints", {})
    return {name: Spec.from_json(name, data) for name, data in table.items()}
