"""KillWorker against a real Celery worker: now, while its paid call is held, at a failpoint."""
from __future__ import annotations


import pytest

from harness._wait import wait_until
from harness.errors import FaultError, WaitTimeout
from harness.checks.landed import faults_landed
from harness.faults import AtFailpoint, InFlight, KillWorker
from harness.evidence.collect import collect
from tests.common.processes import alive, family
from tests.common.tiny import job_state, submit

pytestmark = pytest.mark.integration


def completes(run, job_id: str) -> None:
    """Service is back: a new job goes all the way through."""
    submit(run, job_id)
    wait_until(lambda: job_state(run, job_id) == "done", timeout=20, what=f"{job_id} done")


def events(run, source: str) -> list[tuple[str, str]]:
    return [(e.type, e.name) for e in run.history.events() if e.source == source]


def test_kill_now_ends_the_whole_process_group_and_heal_replaces_it(tiny):
    pid = tiny.workers[0].pid
    group = family(pid)
    assert len(group) >= 2  # the main process and its prefork child
    kill = tiny.faults.kill_worker()
    assert not any(alive(member) for member in group)
    assert kill.killed == [0] and kill.fired
    kill.heal()
    assert tiny.workers[0].is_running() and tiny.workers[0].pid != pid
    assert events(tiny, "fault") == [("invoke", "inject"), ("ok", "inject"), ("invoke", "heal"), ("ok", "heal")]
    assert events(tiny, "worker") == [("ok", "killed"), ("ok", "exited"), ("ok", "ready")]
    completes(tiny, "after-kill")


def test_kill_in_flight_bills_the_held_call_with_the_client_gone(tiny):
    with tiny.faults.kill_worker(when=InFlight("j1", step="label")) as kill:
        submit(tiny, "j1")
        record = kill.wait(10)  # the evidence: which worker held which call
        assert record["worker"] == "worker1" and record["job_id"] == "j1"
        call = tiny.paidapi.wait_for_call(job_id="j1", state="billed", timeout=10)
        wait_until(lambda: tiny.paidapi.ledger("j1")[0]["client_gone"], timeout=5, what="client gone")
        assert call["key"] == "j1:label"
        assert job_state(tiny, "j1") == "processing"  # the worker died before writing "done"
    inject_ok = next(e for e in tiny.history.events() if e.source == "fault" and e.type == "ok")
    assert inject_ok.data["call_id"] == call["call_id"] and inject_ok.data["job_id"] == "j1"
    assert inject_ok.data["caller_pid"] in inject_ok.data["tree"]  # the worker that held the call
    landed = faults_landed(*collect(tiny))
    assert landed.valid is True and f"which held call {call['call_id']} of job j1" in landed.message
    completes(tiny, "after-in-flight")


def test_kill_in_flight_without_a_job_kills_whichever_worker_holds_the_next_call(tiny):
    with tiny.faults.kill_worker(when=InFlight()) as kill:
        assert not kill.fired  # nothing is in flight yet: the kill waits, it does not hit an idle worker
        submit(tiny, "any-1")
        record = kill.wait(10)
        assert record["job_id"] == "any-1" and record["worker"] == "worker1"
        assert job_state(tiny, "any-1") == "processing"  # killed mid-job, before writing "done"
    landed = faults_landed(*collect(tiny))
    assert landed.valid is True and "of job any-1" in landed.message
    completes(tiny, "after-any-in-flight")


def test_kill_at_failpoint_kills_the_worker_before_the_paid_call(tiny):
    kill = tiny.faults.kill_worker(when=AtFailpoint("tiny.after_processing", match={"job_id": "k1"}))
    old = tiny.workers[0].pid
    submit(tiny, "k1")
    kill.wait(10)
    assert not tiny.workers[0].is_running() and not alive(old)
    assert tiny.paidapi.ledger("k1") == []  # nothing after the seam ran
    assert job_state(tiny, "k1") == "processing"
    kill.heal()
    completes(tiny, "after-failpoint")


def test_warm_shutdown_at_a_failpoint_lets_the_running_task_finish(tiny):
    kill = tiny.faults.kill_worker(signal="SIGTERM", when=AtFailpoint("tiny.after_processing"))
    worker = tiny.workers[0]
    submit(tiny, "w1")
    kill.wait(10)
    wait_until(lambda: not worker.is_running(), timeout=15, what="the worker to finish and exit")
    assert job_state(tiny, "w1") == "done"
    killed = next(e for e in tiny.history.events() if e.source == "worker" and e.name == "killed")
    assert (killed.data["signal"], killed.data["group"]) == ("SIGTERM", False)
    kill.heal()
    assert tiny.workers[0] is not worker and tiny.workers[0].is_running()


def test_bad_targets_and_missed_moments_raise_fault_errors(tiny):
    with pytest.raises(FaultError, match="no worker 'worker6'; the workers are: worker1"):
        tiny.faults.kill_worker("worker6")
    tiny.workers.kill(0)
    with pytest.raises(FaultError, match="already dead"):
        tiny.faults.kill_worker()
    tiny.workers.replace(0)
    missed = tiny.faults.kill_worker(when=InFlight("never", timeout=0.3))
    with pytest.raises(FaultError, match="no paid call of job 'never'"):
        missed.wait(5)
    slow = tiny.faults.kill_worker(when=InFlight("not-yet"))
    with pytest.raises(WaitTimeout, match="did not happen within 0.1s") as caught:
        slow.wait(0.1)
    assert caught.value.seen["fired"] is False
    slow.heal()
    with pytest.warns(UserWarning, match="no paid call"):
        errors = tiny.faults.heal_all()
    assert [e.fault for e in errors] == ["kill_worker"]
    assert tiny.paidapi.gates() == []  # the gate did not outlive the fault
    early = tiny.faults.kill_worker(when=InFlight("later"))
    early.heal()  # before the moment came: the gate goes, nobody is killed
    with pytest.raises(FaultError, match="healed before the moment came"):
        early.wait(5)
    assert events(tiny, "fault")[-3:] == [("invoke", "heal"), ("info", "inject"), ("ok", "heal")]
    assert tiny.paidapi.gates() == [] and tiny.workers[0].is_running()
    assert KillWorker().spec()["signal"] == "SIGKILL"


def test_a_kill_of_an_idle_worker_and_a_hang_with_no_call_did_not_land(tiny):
    tiny.faults.kill_worker()
    tiny.faults.hang_endpoint(layer="provider")
    tiny.faults.heal_all()
    landed = faults_landed(*collect(tiny))
    assert landed.valid == "unknown"
    kill, hang = (e["why"] for e in landed.details["effects"])
    assert kill.startswith("kill_worker killed worker") and kill.endswith(
        "which held no paid call, and no job was retried after it (every job finished on its first attempt)")
    assert hang == "hang_endpoint (provider) was set, but no call was held (hung) while it was (0 call(s) in the window)"
