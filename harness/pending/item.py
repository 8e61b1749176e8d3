"""One piece of work that can still run: what it is, where it waits, since when."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class PendingWork:
    """Work the system may still do, as one reader found it.

    ``since`` is a wall-clock time: when the work was handed out or last
    changed, where the source says so (a broker's delivery time, a job's
    last state change, a paid call's start), else when the harness first saw
    it. ``blocks`` is False for work that is only reported, never waited for
    (a message parked in a dead-letter queue that nothing in the stack
    consumes).
    """

    kind: str
    where: str
    count: int = 1
    since: float | None = None
    detail: str = ""
    blocks: bool = True
    ids: tuple[str, ...] = field(default=())

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity across reads (to remember when it was first seen): one message or call by its id,
        a count (a queue's length, an SQS figure) by its place: "non-empty since"."""
        return (self.kind, self.where, self.ids[0] if len(self.ids) == 1 else "")

    def seen_since(self, first_seen: float) -> "PendingWork":
        """This item, dated ``first_seen`` when its source gave no date."""
        return self if self.since is not None else replace(self, since=first_seen)

    def describe(self, now: float | None = None) -> str:
        """One line: ``3 queued message(s) in redis queue 'refapp' (for 2.1 s): ...``."""
        now = time.time() if now is None else now
        age = f" (for {now - self.since:.1f} s)" if self.since is not None else ""
        detail = f": {self.detail}" if self.detail else ""
        parked = "" if self.blocks else " [not waited for]"
        return f"{self.count} {self.kind} in {self.where}{age}{detail}{parked}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (history events, verdict details)."""
        return {"kind": self.kind, "where": self.where, "count": self.count, "since": self.since,
                "detail": self.detail, "blocks": self.blocks, "ids": list(self.ids)}


def blocking(items: list[PendingWork]) -> list[PendingWork]:
    """The items settling waits for."""
    return [item for item in items if item.blocks and item.count > 0]


def describe_all(items: list[PendingWork], now: float | None = None) -> str:
    """Every item on its own line, or ``nothing pending``."""
    return "\n".join(f"  - {item.describe(now)}" for item in items) if items else "  nothing pending"
