"""``jq.record``: submissions, status events and worker lifecycle in the history's vocabulary."""
from __future__ import annotations

import pytest

from harness.history import Record, Recorder
from harness.history import vocabulary as v


@pytest.fixture
def record(tmp_path):
    with Recorder(tmp_path / "history.jsonl") as recorder:
        yield Record(recorder)


def test_a_submission_is_ok_refused_or_lost(record):
    record.submitting(project="p", file="a.pdf")
    ok = record.submission("j1", status=202)
    refused = record.submission(None, accepted=False, error="HTTP 503", status=503)
    lost = record.submission(None, accepted=None, error="ReadTimeout()")
    assert [(e.source, e.type, e.name) for e in record.history.events()] == [
        (v.SUBMIT, "invoke", v.SUBMIT), (v.SUBMIT, "ok", v.SUBMIT), (v.SUBMIT, "fail", v.SUBMIT),
        (v.SUBMIT, "info", v.SUBMIT)]
    assert (ok.job_id, ok.data) == ("j1", {"status": 202, "job_id": "j1"})
    assert refused.data == {"status": 503, "error": "HTTP 503"} and lost.data == {"error": "ReadTimeout()"}


def test_a_submission_says_what_it_was(record):
    with pytest.raises(ValueError, match="names its job_id"):
        record.submission(None)
    with pytest.raises(ValueError, match="says why"):
        record.submission(None, accepted=False)


def test_status_events_and_worker_lifecycle_use_the_vocabulary(record):
    event = record.status_event("j1", "done", attempt=2, reason=None)
    assert (event.source, event.name, event.attempt, event.data["state"]) == (v.EVENT, v.STATUS, 2, "done")
    assert record.status_stream_lost().name == v.STREAM
    killed = record.worker("killed", "worker1", pid=81, signal="SIGKILL")
    assert (killed.source, killed.name, killed.data) == (v.WORKER, v.WORKER_KILLED,
                                                         {"worker": "worker1", "pid": 81, "signal": "SIGKILL"})
    with pytest.raises(ValueError, match="known: start, ready, killed, exited"):
        record.worker("paused", "worker1")  # type: ignore[arg-type]
