"""A counterexample's timeline of a job shows the faults and worker deaths that hit that job."""
from __future__ import annotations

from harness.checks.timeline import format_timeline, job_timeline
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import INVOKE, OK

WORKER1, WORKER2 = [101, 111, 112], [201, 211, 212]  # each worker's process tree: main process first


def killed_mid_call() -> HistoryBuilder:
    """Job j1 runs in worker2's pool child 211 and waits on call #1 when both workers are SIGKILLed."""
    b = HistoryBuilder()
    b.submit("j1", 0.1)
    b.event(v.INSTRUMENT, INVOKE, "task", 0.2, "j1", 1, pid=211, task="app.process", task_id="t-1")
    b.state("j1", 0.3, "running", attempt=1)
    b.call("j1", 0.4, 0.9, caller_pid=211)  # held until after the kills
    for t, name, tree in ((0.6, "worker1", WORKER1), (0.7, "worker2", WORKER2)):
        b.event(v.FAULT, INVOKE, v.INJECT, t, fault="kill_worker", params={"worker": name})
        b.event(v.WORKER, OK, v.WORKER_KILLED, t + 0.01, worker=name, pid=tree[0], signal="SIGKILL")
        b.event(v.FAULT, OK, v.INJECT, t + 0.02, fault="kill_worker", params={"worker": name}, worker=name,
                pid=tree[0], tree=tree, signal="SIGKILL", group=True)
    return b


def lines(b: HistoryBuilder, job_id: str) -> list[str]:
    return format_timeline(job_timeline(b.history(), job_id))


def test_the_kill_of_the_worker_that_ran_the_job_is_in_its_timeline_with_the_call_it_held():
    text = "\n".join(lines(killed_mid_call(), "j1"))
    assert "kill_worker: worker2 SIGKILL pid 201 while holding call #call-1" in text
    assert "killed  worker2 SIGKILL pid 201" in text  # the pool's own event of that kill
    assert "worker1" not in text  # the other worker held nothing of this job


def test_the_kill_comes_in_time_order_among_the_jobs_own_events():
    entries = job_timeline(killed_mid_call().history(), "j1")
    assert [e["at"] for e in entries] == sorted(e["at"] for e in entries)
    sources = [e["source"] for e in entries]
    assert sources.index(v.FAULT) < max(i for i, s in enumerate(sources) if s == v.PAIDAPI)  # before the call's end


def test_a_fault_naming_the_job_in_its_data_is_in_its_timeline_and_not_in_another_jobs():
    b = killed_mid_call()
    b.submit("j2", 1.0)
    b.state("j2", 1.1, "running", attempt=1)
    b.event(v.FAULT, OK, v.INJECT, 1.2, fault="paidapi_mode", params={}, job_id="j2", mode="hang")
    assert any("paidapi_mode" in line for line in lines(b, "j2"))
    assert not any("paidapi_mode" in line for line in lines(b, "j1"))
    assert not any("kill_worker" in line for line in lines(b, "j2"))  # j2 never ran in worker2's child


def test_worker_events_before_the_job_began_are_left_out():
    b = HistoryBuilder()
    b.event(v.WORKER, OK, v.WORKER_READY, 0.0, worker="worker2", pid=211)
    b.submit("j1", 0.1)
    b.call("j1", 0.4, 0.5, caller_pid=211)
    assert not any("ready" in line for line in lines(b, "j1"))


def test_a_job_no_fault_touched_keeps_its_own_events_only():
    b = HistoryBuilder()
    b.submit("j1", 0.1)
    b.call("j1", 0.4, 0.5, caller_pid=999)
    b.event(v.WORKER, OK, v.WORKER_KILLED, 0.6, worker="worker1", pid=101, signal="SIGKILL")
    assert [e["source"] for e in job_timeline(b.history(), "j1")] == [v.SUBMIT, v.PAIDAPI, v.PAIDAPI]


def test_a_kill_recorded_with_the_jobs_id_brings_the_pools_event_of_that_kill_along():
    """A kill at the job's held call (``InFlight``) is recorded with the job's id; the pool's event has none."""
    b = HistoryBuilder()
    b.submit("j1", 0.1)
    b.call("j1", 0.4, 0.9, caller_pid=211)
    b.event(v.WORKER, OK, v.WORKER_KILLED, 0.6, worker="worker2", pid=201, signal="SIGKILL")
    b.event(v.FAULT, OK, v.INJECT, 0.61, "j1", fault="kill_worker", params={}, job_id="j1", call_id="call-1",
            worker="worker2", pid=201, tree=WORKER2, signal="SIGKILL")
    text = "\n".join(lines(b, "j1"))
    assert "killed  worker2 SIGKILL pid 201" in text
    assert "kill_worker: worker2 SIGKILL pid 201 while holding call #call-1" in text
