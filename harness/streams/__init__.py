"""The app's status streams, read by the harness during a test: ``jq.streams``.

A user watching a job (its status stream) or a dashboard watching every
job (the all-jobs stream) must be told each state in the database's order
and, in the end, the final one, also across a lost event or a reconnect.
The harness reads those streams as a client would (``reader.StreamReader``,
which reconnects with ``Last-Event-ID`` as a browser does) and records
what each told; ``streams_agree_with_db`` judges it against the job state
log and the final snapshot.

Config names the streams (templates filled from the stack's values)::

    [tool.jobquake]
    status_stream = "{api_url}/events"                      # read during every test
    job_status_stream = "{api_url}/jobs/{job_id}/events"    # jq.streams.job(job_id)

A scenario opens more (``jq.streams.job(job_id)``, ``jq.streams.open(url)``).
Before the verdict ``finish`` gives each open stream ``CATCH_UP`` seconds to
tell every job's final state, then stops them all and records what it saw.
"""
from __future__ import annotations

import time
from typing import Any

from harness.history.vocabulary import READ, STREAMS_SOURCE
from harness.errors import ConfigError
from harness.history import vocabulary as v
from harness.streams.reader import Fields, StreamError, StreamReader

CATCH_UP = 5.0  # seconds a stream may take, once the app settled, to tell what the database says
__all__ = ["CATCH_UP", "Fields", "StatusStreams", "StreamError", "StreamReader"]


class StatusStreams:
    """The stream readers of one run."""

    def __init__(self, run: Any):
        self.run = run
        self.readers: list[StreamReader] = []

    def open(self, url: str, *, job_id: str | None = None, name: str | None = None,
             fields: Fields = Fields()) -> StreamReader:
        """Read the SSE stream at ``url`` (one job's with ``job_id``, else every job's) until the verdict."""
        reader = StreamReader(name or f"stream-{len(self.readers) + 1}", url, record=self.run.history.record,
                              terminal_states=tuple(self.run.config.terminal_states), job_id=job_id, fields=fields)
        self.readers.append(reader.start())
        return reader

    def all_jobs(self) -> StreamReader | None:
        """Open config's ``status_stream`` (every job's), once; None when config names none."""
        template = self.run.config.status_stream
        if not template:
            return None
        found = next((r for r in self.readers if r.name == "all-jobs"), None)
        return found or self.open(self._url(template, "status_stream"), name="all-jobs")

    def job(self, job_id: str) -> StreamReader:
        """Open config's ``job_status_stream`` for ``job_id``."""
        template = self.run.config.job_status_stream
        if not template:
            raise ConfigError("job_status_stream is not set: name the URL template of one job's status stream, "
                              "e.g. '{api_url}/jobs/{job_id}/events'", key="job_status_stream")
        return self.open(self._url(template, "job_status_stream", job_id=job_id), job_id=job_id,
                         name=f"job-{job_id}")

    def _url(self, template: str, key: str, **extra: str) -> str:
        try:
            return template.format_map({**self.run.values, **extra})
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"{key} = {template!r}: unknown value {exc}; known: "
                              f"{', '.join(sorted(self.run.values))}", key=key) from exc

    # -- before the verdict ---------------------------------------------------------------
    def finish(self, history: Any, snapshot: Any) -> None:
        """Give the streams ``CATCH_UP`` s to tell each job's final state (``snapshot``), then stop them.

        The all-jobs stream is held only to jobs whose state changed (``history``'s state log) while it
        listened. Records what each stream told and whether it was still connected.
        """
        if not self.readers:
            return
        final = {row.job_id: (row.state, row.attempt) for row in snapshot.jobs}
        changed: dict[str, float] = {}
        for event in history.by_source(v.JOB, name=v.STATE):
            if event.job_id is not None:
                changed[event.job_id] = max(changed.get(event.job_id, event.t), event.t)
        deadline = time.monotonic() + CATCH_UP
        while time.monotonic() < deadline and not all(self._caught_up(r, final, changed) for r in self.readers):
            time.sleep(0.05)
        caught = {r.name: self._caught_up(r, final, changed) for r in self.readers}
        connected = {r.name: r.connected for r in self.readers}
        for reader in self.readers:
            reader.stop()
        self.run.history.record(v.HARNESS, "ok", READ, data={
            "source": STREAMS_SOURCE, "records": sum(r.told.events for r in self.readers),
            "streams": [{"stream": r.name, "url": r.url, "job_id": r.job_id, "connected": connected[r.name],
                         "caught_up": caught[r.name]} for r in self.readers]})

    @staticmethod
    def _caught_up(reader: StreamReader, final: dict[str, tuple[str, int | None]],
                   changed_since: dict[str, float]) -> bool:
        if reader.job_id is not None:
            return reader.told.terminal or reader.told.last.get(reader.job_id) == final.get(reader.job_id)
        opened = reader.opened_at or float("inf")
        return all(reader.told.last.get(job) == want for job, want in final.items()
                   if changed_since.get(job, float("-inf")) >= opened)

    def close(self) -> None:
        """Stop every reader (teardown; idempotent)."""
        for reader in self.readers:
            reader.stop()
