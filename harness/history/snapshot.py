"""The final database snapshot checkers read next to the history.

Taken once, after the run has settled and every fault has healed::

    Snapshot(jobs=[JobRow("j1", "done", None, 1, heartbeat_at=None,
                          updated_at=1700000000.5, created_at=1700000000.0)],
             taken_at_wall=time.time())

Times are wall-clock seconds (``time.time()``), as the database stores them.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Mapping

from harness.config import DEFAULT_TERMINAL_STATES

__all__ = ["JobRow", "Snapshot"]


@dataclass(frozen=True)
class JobRow:
    """One row of the app's job table as the snapshot saw it."""

    job_id: str
    state: str
    reason: str | None = None
    attempt: int | None = None
    heartbeat_at: float | None = None
    updated_at: float | None = None
    created_at: float | None = None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "JobRow":
        """Build a row from its JSON form."""
        return cls(job_id=str(raw["job_id"]), state=str(raw["state"]), reason=raw.get("reason"),
                   attempt=raw.get("attempt"), heartbeat_at=raw.get("heartbeat_at"),
                   updated_at=raw.get("updated_at"), created_at=raw.get("created_at"))


_ROW_FIELDS = tuple(f.name for f in fields(JobRow))


def _row_dict(row: JobRow) -> dict[str, Any]:
    # every field is a scalar: ``dataclasses.asdict``'s deep copy only costs
    return {name: getattr(row, name) for name in _ROW_FIELDS}


@dataclass(frozen=True)
class Snapshot:
    """Every job row at the end of a run; ``extra`` holds app-specific facts."""

    jobs: tuple[JobRow, ...] = ()
    taken_at_wall: float = 0.0
    terminal_states: tuple[str, ...] = DEFAULT_TERMINAL_STATES
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "terminal_states", tuple(self.terminal_states))

    @cached_property
    def _by_id(self) -> dict[str, JobRow]:
        return {row.job_id: row for row in self.jobs}

    def job(self, job_id: str) -> JobRow | None:
        """The row of one job, or None when the table has no such row."""
        return self._by_id.get(job_id)

    def is_terminal(self, state: str | None) -> bool:
        """Whether ``state`` is one of this snapshot's terminal states."""
        return state in self.terminal_states

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (as stored in snapshot.json)."""
        return {"jobs": [_row_dict(row) for row in self.jobs], "taken_at_wall": self.taken_at_wall,
                "terminal_states": list(self.terminal_states), "extra": self.extra}

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> "Snapshot":
        """Rebuild a snapshot from its JSON form."""
        return cls(jobs=tuple(JobRow.from_dict(r) for r in raw.get("jobs", [])),
                   taken_at_wall=float(raw.get("taken_at_wall", 0.0)),
                   terminal_states=tuple(raw.get("terminal_states") or DEFAULT_TERMINAL_STATES),
                   extra=dict(raw.get("extra") or {}))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write snapshot.json."""
        # one job row a line, for people, each encoded by the C encoder: ``json.dump`` with ``indent``
        # takes the pure-Python one, seconds for a long run's table
        encode = json.JSONEncoder(default=str).encode
        raw = self.to_dict()
        rows = ",\n ".join(encode(row) for row in raw.pop("jobs"))
        rest = encode(raw)[1:]  # the other keys (taken_at_wall, ...) after the jobs, with the closing brace
        with open(path, "w", encoding="utf-8") as handle:
            handle.write('{"jobs": [\n ' + rows + "\n], " + rest + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Snapshot":
        """Read snapshot.json."""
        with open(path, encoding="utf-8") as handle:
            return cls.from_dict(json.load(handle))
