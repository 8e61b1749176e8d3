"""Recorder: complete lines on disk after every record, thread safety, reload."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from harness import wait_until
from harness.history import Event, Recorder, load
from harness.history import vocabulary as v


def lines(path) -> list[str]:
    return path.read_text().splitlines()


def test_each_record_is_a_complete_line_on_disk_at_once(tmp_path):
    path = tmp_path / "history.jsonl"
    with Recorder(path) as recorder:
        for n in range(5):
            recorder.record("job", "ok", "state", job_id=f"j{n}", attempt=1, data={"state": "running"})
            on_disk = lines(path)
            assert len(on_disk) == n + 1
            assert json.loads(on_disk[-1])["job_id"] == f"j{n}"
            assert path.read_text().endswith("\n")


def test_record_assigns_indexes_and_times(tmp_path):
    with Recorder(tmp_path / "h.jsonl") as recorder:
        first = recorder.record(v.SUBMIT, "invoke", v.SUBMIT, data={"project": "p"})
        second = recorder.record(v.SUBMIT, "ok", v.SUBMIT, job_id=7, t=first.t + 1, wall=5.0)
    assert (first.index, second.index) == (0, 1)
    assert second.job_id == "7" and second.wall == 5.0 and second.t == first.t + 1


def test_a_wall_time_alone_is_placed_with_the_offset_in_force_then(tmp_path, monkeypatch):
    """Recorded after the wall clock was stepped 1.7 s forward, a database time keeps its place."""
    from harness.history import clock as clock_module

    readings = {"mono": 50.0, "step": 0.0}
    clock = clock_module.WallClock(wall=lambda: 1_000.0 + readings["mono"] + readings["step"],
                                   monotonic=lambda: readings["mono"])
    monkeypatch.setattr(clock_module, "WALL_CLOCK", clock)
    clock.sample()
    written = 1_000.0 + 50.0
    readings["mono"], readings["step"] = 52.0, 1.7
    clock.sample()
    with Recorder(tmp_path / "h.jsonl") as recorder:
        event = recorder.record(v.SWEEP, "ok", v.SWEEP, wall=written)
    assert event.t == pytest.approx(50.0) and event.wall == written


def test_extend_keeps_foreign_times_and_events_sorts_by_time(tmp_path):
    with Recorder(tmp_path / "h.jsonl") as recorder:
        recorder.record("fault", "ok", "inject", t=10.0, wall=1.0)
        recorder.extend([Event(-1, 5.0, 0.5, "paidapi", "invoke", "call", "j1", 1, {"call_id": "c1"})])
        history = recorder.events()
    assert [(e.t, e.index, e.source) for e in history] == [(5.0, 1, "paidapi"), (10.0, 0, "fault")]


def test_concurrent_records_get_unique_indexes_and_whole_lines(tmp_path):
    path = tmp_path / "h.jsonl"
    with Recorder(path) as recorder:
        def work(worker: int) -> None:
            for n in range(200):
                recorder.record("worker", "ok", "ready", data={"worker": worker, "n": n})
        threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    loaded = load(path)
    assert sorted(e.index for e in loaded) == list(range(1600))


def test_reopening_continues_the_indexes(tmp_path):
    path = tmp_path / "h.jsonl"
    with Recorder(path) as recorder:
        recorder.record("job", "ok", "state", t=1.0)
    with Recorder(path) as recorder:
        event = recorder.record("job", "ok", "state", t=2.0)
        assert event.index == 1 and len(recorder.events()) == 2


def test_torn_last_line_is_skipped_on_load_and_cut_on_reopen(tmp_path):
    path = tmp_path / "h.jsonl"
    good = Event(0, 1.0, 1.0, "job", "ok", "state").to_json()
    path.write_text(good + "\n" + good[:17])
    assert len(load(path)) == 1
    with Recorder(path) as recorder:
        recorder.record("job", "ok", "state", t=2.0)
    assert [e.index for e in load(path)] == [0, 1]


WRITER = """
import sys
from harness.history import Recorder
recorder = Recorder(sys.argv[1])
n = 0
while True:
    recorder.record("worker", "ok", "ready", data={"n": n, "pad": "x" * 500})
    n += 1
"""


def test_a_killed_recorder_process_leaves_complete_lines(tmp_path):
    path = tmp_path / "h.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    try:
        wait_until(lambda: path.exists() and path.stat().st_size > 200_000, timeout=20,
                   what="the writer to record events")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    history = load(path)
    assert len(history) > 300
    assert [e.data["n"] for e in history] == list(range(len(history)))
