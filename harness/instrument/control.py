"""The harness side: the run's instrumentation folder, the app processes' environment, the evidence.

The folder holds ``events.jsonl`` (what the instrumented processes report)
and ``attempts/`` (the per task-and-job run counts that number attempts);
both are emptied between tests, like the failpoints.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Mapping

from harness.instrument import BOOT_DIR, ENV_DIR, ENV_JOB_ID_FROM, ENV_PAIDAPI_URL
from harness.instrument._events import ATTEMPTS_DIR, EVENTS_FILE


class InstrumentControl:
    """One stack's instrumentation folder."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | os.PathLike[str]) -> InstrumentControl:
        """Make the folder, open to every uid (app containers may run as another user)."""
        control = cls(path)
        control.reset()
        return control

    def env(self, *, paidapi_url: str, job_id_from: str, pythonpath: str = "") -> dict[str, str]:
        """Variables that load the instrumentation into an app process (``pythonpath``: the app's own)."""
        parts = [str(BOOT_DIR), *(p for p in pythonpath.split(os.pathsep) if p)]
        return {ENV_DIR: str(self.path), ENV_PAIDAPI_URL: paidapi_url, ENV_JOB_ID_FROM: job_id_from,
                "PYTHONPATH": os.pathsep.join(parts)}

    def reset(self) -> None:
        """Forget every event and attempt count (a new test)."""
        self.path.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.path / ATTEMPTS_DIR, ignore_errors=True)
        (self.path / ATTEMPTS_DIR).mkdir()
        (self.path / EVENTS_FILE).write_bytes(b"")
        for item in (self.path, self.path / ATTEMPTS_DIR, self.path / EVENTS_FILE):
            os.chmod(item, 0o777 if item.is_dir() else 0o666)

    def records(self) -> list[dict[str, Any]]:
        """Every event reported so far, oldest first (a line still being written is skipped)."""
        try:
            data = (self.path / EVENTS_FILE).read_bytes()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in data.splitlines() if line.endswith(b"}")]

    def errors(self) -> list[dict[str, Any]]:
        """The reported failures (e.g. a ``job_id_from`` that did not resolve)."""
        return [r for r in self.records() if r.get("type") == "fail"]


def events_from_records(records: list[Mapping[str, Any]]) -> list[Any]:
    """History events (source ``instrument``) from the folder's records."""
    from harness.history import vocabulary as v
    from harness.history.event import UNINDEXED, Event

    return [Event(UNINDEXED, float(r["t"]), float(r.get("wall") or 0.0), v.INSTRUMENT, str(r["type"]),
                  str(r["name"]), r.get("job_id"), r.get("attempt"), dict(r.get("data") or {}))
            for r in records]
