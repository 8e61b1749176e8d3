"""The harness side: the run's instrumentation folder, the app processes' environment, the evidence.

The folder holds ``events.jsonl`` (what the instrumented processes report)
and ``attempts/`` (the per task-and-job run counts that number attempts);
both are emptied between tests, like the failpoints. Both are evidence a
verdict reads, so the folder is private to the run as the failpoint channel
is (owner only, or shared with one group when the app runs as another uid),
and events are read only from our own file in our own folder.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness._channel_dir import check_channel, make_channel, read_channel_file, renew_folder
from harness.instrument import BOOT_DIR, ENV_DIR, ENV_JOB_ID_FROM, ENV_PAIDAPI_URL, ENV_SETTINGS
from harness.instrument._events import ATTEMPTS_DIR, BROKER_FILE, EVENTS_FILE
from harness.instrument._pools import POOLS_DIR


_RISK = "can forge the events and attempt numbers a verdict reads"


class InstrumentControl:
    """One stack's instrumentation folder."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, group: int | None = None) -> InstrumentControl:
        """Make (or adopt) the folder, private to this user and emptied.

        ``group``: share it with that group (app processes running as another
        uid in it); the folder is then 02770 and its files 0660.
        """
        make_channel(Path(path), folders=(ATTEMPTS_DIR, POOLS_DIR), files={EVENTS_FILE: b"", BROKER_FILE: b""}, group=group)
        control = cls(path)
        control.reset()
        return control

    def env(self, *, paidapi_url: str, job_id_from: str, pythonpath: str = "",
            settings: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Variables that load the instrumentation into an app process (``pythonpath``: the app's own;
        ``settings``: see ``settings_for``)."""
        parts = [str(BOOT_DIR), *(p for p in pythonpath.split(os.pathsep) if p)]
        env = {ENV_DIR: str(self.path), ENV_PAIDAPI_URL: paidapi_url, ENV_JOB_ID_FROM: job_id_from,
               "PYTHONPATH": os.pathsep.join(parts)}
        if settings:
            env[ENV_SETTINGS] = json.dumps(settings, sort_keys=True)
        return env

    def reset(self) -> None:
        """Forget every event and attempt count (a new test)."""
        self._check()
        fd = os.open(self.path / EVENTS_FILE, os.O_WRONLY | os.O_NOFOLLOW)
        try:
            os.ftruncate(fd, 0)  # the same file: app processes append to it by name
        finally:
            os.close(fd)
        renew_folder(self.path, ATTEMPTS_DIR)

    def records(self) -> list[dict[str, Any]]:
        """Every event reported so far, oldest first (a line still being written is skipped).

        ConfigError when the folder or the events file is not our own, or others may write it.
        """
        self._check()
        data = read_channel_file(self.path / EVENTS_FILE, what="instrumentation events file",
                                 risk=_RISK, key=ENV_DIR)
        return [json.loads(line) for line in data.splitlines() if line.endswith(b"}")]

    def broker_settings(self) -> dict[str, Any] | None:
        """The broker's restore settings the last worker started runs with (None before any started)."""
        self._check()
        data = read_channel_file(self.path / BROKER_FILE, what="instrumentation broker file", risk=_RISK,
                                 key=ENV_DIR)
        return json.loads(data) if data.strip() else None

    def pools(self) -> list[dict[str, Any]]:
        """Each app process's pool file (``harness.instrument._pools``): its checkouts, what is still out.

        A file caught halfway through a rewrite is read again; one that still
        does not parse is left out (its process rewrites it at its next checkout).
        """
        self._check()
        folder = self.path / POOLS_DIR
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            for _ in range(3):
                data = read_channel_file(path, what="connection pool file", risk=_RISK, key=ENV_DIR)
                try:
                    found.append(json.loads(data))
                    break
                except ValueError:
                    continue
        return found

    def errors(self) -> list[dict[str, Any]]:
        """The reported failures (e.g. a ``job_id_from`` that did not resolve)."""
        return [r for r in self.records() if r.get("type") == "fail"]

    def _check(self) -> None:
        check_channel(self.path, what="instrumentation folder", risk=_RISK,
                      fix="make it with InstrumentControl.create", key=ENV_DIR)


def settings_for(config: Any, *, brokers: list[str], databases: list[str],
                 sqs: Sequence[str] = ()) -> dict[str, Any]:
    """What the instrumentation of every app process needs from config, in run seconds: provider
    hosts to route, paid-call timeouts to scale, Celery overrides, and the stack's own broker,
    database and SQS endpoint URLs (``brokers`` / ``databases`` / ``sqs``: as the app is given
    them, and direct)."""
    from harness.instrument.celery_settings import scaled

    return {"time_scale": config.time_scale,
            "paid_hosts": dict(config.paid_hosts),
            "scale_paid_call_timeouts": list(config.scale_paid_call_timeouts),
            "celery": scaled(config.celery, config.time_scale),
            "broker": brokers, "database": databases, "sqs": list(sqs)}


def events_from_records(records: list[Mapping[str, Any]]) -> list[Any]:
    """History events (source ``instrument``) from the folder's records."""
    from harness.history import vocabulary as v
    from harness.history.event import UNINDEXED, Event

    return [Event(UNINDEXED, float(r["t"]), float(r.get("wall") or 0.0), v.INSTRUMENT, str(r["type"]),
                  str(r["name"]), r.get("job_id"), r.get("attempt"), dict(r.get("data") or {}))
            for r in records]
