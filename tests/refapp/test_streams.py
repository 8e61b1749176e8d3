"""refapp's status streams: news of the database, never ahead of it, never behind it for long."""
from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import sqlalchemy as sa

from harness._wait import wait_until
from refapp import budgets, db, events
from refapp.streams import SentStates
from tests.refapp.conftest import SCALE, Stack, quiet_job

RECHECK = budgets.scaled("stream_recheck", SCALE)


class Reader:
    """An SSE client in a thread: every event it got, with its id."""

    def __init__(self, url: str, headers: dict[str, str] | None = None):
        self.got: list[dict[str, Any]] = []
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(url, headers or {}), daemon=True)
        self._thread.start()

    def _read(self, url: str, headers: dict[str, str]) -> None:
        try:
            with httpx.stream("GET", url, headers=headers, timeout=30) as response:
                event_id = None
                for line in response.iter_lines():
                    if line.startswith("id: "):
                        event_id = line[4:]
                    elif line.startswith("data: "):
                        self.got.append({**json.loads(line[6:]), "id": event_id})
        except httpx.HTTPError:
            pass  # the API stopped at the end of the session, its all-jobs stream still open
        finally:
            self.ended.set()

    def states(self, job_id: str) -> list[tuple[str, int]]:
        return [(e["state"], e["attempt"]) for e in self.got if e["job_id"] == job_id]


def _write_state(job_id: str, state: str, attempt: int) -> None:
    """Change the job's row the way an attempt would, and publish nothing: the event is lost."""
    with db.engine().begin() as conn:
        conn.execute(sa.update(db.jobs).where(db.jobs.c.id == job_id)
                     .values(state=state, attempt=attempt, updated_at=db.NOW))


def test_sent_states_order_a_jobs_life_by_attempt_then_state() -> None:
    sent = SentStates("j")
    sent.note({"job_id": "j", "state": "running", "attempt": 2})
    assert sent.older({"job_id": "j", "state": "queued", "attempt": 1})  # the sweeper's late news of attempt 1
    assert not sent.older({"job_id": "j", "state": "done", "attempt": 2})
    assert sent.repeats({"job_id": "j", "state": "running", "attempt": 2})
    assert sent.ends({"job_id": "j", "state": "done", "attempt": 2})
    assert not sent.ends({"job_id": "j", "state": "queued", "attempt": 2})


def test_a_lost_event_reaches_a_jobs_stream_from_the_database(stack: Stack) -> None:
    job_id = quiet_job("stream-lost.pdf", ["one"])
    reader = Reader(f"{stack.api_url}/jobs/{job_id}/events")
    wait_until(lambda: reader.got, timeout=10, what="the stream's first state")

    _write_state(job_id, "running", 1)
    _write_state(job_id, "done", 1)

    assert reader.ended.wait(RECHECK + 10), reader.got  # the terminal state ends the stream
    assert reader.states(job_id) == [("queued", 0), ("done", 1)]


def test_an_older_attempts_late_event_is_not_forwarded(stack: Stack) -> None:
    job_id = quiet_job("stream-stale.pdf", ["one"])
    _write_state(job_id, "running", 2)
    reader = Reader(f"{stack.api_url}/jobs/{job_id}/events")
    wait_until(lambda: reader.got, timeout=10, what="the stream's first state")

    events.publish(events.job_event(job_id, "queued", "attempt 1 stopped heartbeating; sent again", 1))
    events.publish(events.job_event(job_id, "done", None, 2))

    assert reader.ended.wait(10), reader.got
    assert reader.states(job_id) == [("running", 2), ("done", 2)]


def test_a_dashboard_that_reconnects_is_caught_up_on_what_it_missed(stack: Stack) -> None:
    job_id = quiet_job("stream-resume.pdf", ["one"])
    missed_since = time.time()
    _write_state(job_id, "done", 1)  # while the dashboard was away

    reader = Reader(f"{stack.api_url}/events", headers={"Last-Event-ID": str(missed_since)})
    wait_until(lambda: reader.states(job_id), timeout=10, what="the missed change")

    assert reader.states(job_id) == [("done", 1)]
    assert float(reader.got[0]["id"]) >= missed_since - budgets.scaled("stream_overlap", SCALE)
