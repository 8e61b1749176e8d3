"""PauseService, BrokerOutage, DuplicateSubmission, Failpoint and heal_all against the tiny stack."""
from __future__ import annotations

import psycopg
import pytest
import redis
from celery import Celery

from harness._wait import wait_until
from harness.errors import FaultError, WaitTimeout
from harness.faults import Fault, Queued
from harness.checks import UNKNOWN
from harness.checks.landed import faults_landed
from harness.faults.services import BROKER_ERRORS, process_state
from harness.evidence.collect import collect
from tests.common.tiny import job_state, submit

pytestmark = pytest.mark.integration


def completes(run, job_id: str) -> None:
    submit(run, job_id)
    wait_until(lambda: job_state(run, job_id) == "done", timeout=20, what=f"{job_id} done")


def ping(run, timeout: float = 0.3) -> bool:
    with redis.Redis(host="127.0.0.1", port=run.stack.redis.port, password=run.stack.redis.password,
                     socket_timeout=timeout,
                     socket_connect_timeout=timeout, retry=None) as conn:
        return conn.ping()


def test_paused_redis_answers_nothing_until_healed(tiny):
    pause = tiny.faults.pause_service("redis")
    assert process_state(tiny.stack.redis.pid) == "T"
    with pytest.raises(redis.TimeoutError):
        ping(tiny)
    pause.heal()
    assert ping(tiny)
    completes(tiny, "after-pause")


def test_pause_a_worker_by_name(tiny):
    pause = tiny.faults.pause_service("worker1")
    assert process_state(tiny.workers[0].pid) == "T"
    pause.heal()
    pause.heal()  # idempotent
    landed = faults_landed(*collect(tiny))
    assert landed.valid == UNKNOWN and "froze worker1" in landed.message  # it was idle: no effect to show
    completes(tiny, "after-worker-pause")


def test_a_worker_paused_while_it_held_a_paid_call_landed(tiny):
    with tiny.faults.hang_endpoint(job_id="p1"):
        submit(tiny, "p1")
        call = tiny.paidapi.wait_for_call(job_id="p1", state="any", timeout=10)
        pause = tiny.faults.pause_service("worker1")
        pause.heal()
    landed = faults_landed(*collect(tiny))
    assert landed.valid is True, landed.message
    assert f"froze worker1 (pid {tiny.workers[0].pid}) while it held call {call['call_id']}" in landed.message


def test_pause_of_an_unknown_service_names_the_known_ones(tiny):
    with pytest.raises(FaultError, match="no service 'nope'; known: redis, postgres"):
        tiny.faults.pause_service("nope")


def test_stop_service_stops_what_jq_stack_names_until_the_heal(tiny):
    worker = tiny.stack.service("worker1")
    assert worker is tiny.workers[0] and "worker1" in tiny.stack.service_names()
    stop = tiny.faults.stop_service("worker1")
    assert not worker.is_running()
    stop.heal()
    assert worker.is_running()
    landed = faults_landed(*collect(tiny))
    assert landed.valid is True and "stop_service stopped worker1; it stayed stopped until the heal" in landed.message


def test_broker_outage_refuses_connections_and_heal_brings_the_broker_back(tiny):
    port = tiny.stack.redis.port
    outage = tiny.faults.broker_outage()
    with pytest.raises(redis.ConnectionError):
        ping(tiny)
    # the app's side of the outage: its worker lost the broker and said so
    wait_until(lambda: outage._watch.lines(BROKER_ERRORS), timeout=10, what="the worker to log the lost broker")
    outage.heal()
    assert tiny.stack.redis.port == port and ping(tiny)
    completes(tiny, "after-outage")
    landed = faults_landed(*collect(tiny))
    assert landed.valid is True and landed.message.startswith("broker_outage: the app logged")


def test_an_outage_when_a_message_waits_loses_exactly_that_message(tiny):
    """Queued(job_id): the outage comes once the job's message waits in Redis, and takes it with it."""
    stop = tiny.faults.stop_service("worker1")  # nobody takes the message: it waits
    outage = tiny.faults.broker_outage(when=Queued("q1"))
    assert ping(tiny)  # still up: nothing waits yet
    submit(tiny, "q1")
    record = outage.wait(timeout=10)
    assert record["job_id"] == "q1" and record["waiting"] == 1 and record["queues"] == ["celery"]
    with pytest.raises(redis.ConnectionError):
        ping(tiny)
    outage.heal()
    stop.heal()
    completes(tiny, "after-queued-outage")  # the worker is back and takes new work
    assert job_state(tiny, "q1") == "queued"  # but the message that waited is gone


def test_a_queued_outage_whose_moment_never_comes_leaves_the_broker_up(tiny):
    outage = tiny.faults.broker_outage(when=Queued("never"))
    outage.heal()
    assert ping(tiny)
    with pytest.raises(FaultError, match="healed before the moment came"):
        outage.wait(timeout=1)


def test_duplicate_submission_sends_the_same_job_twice_and_the_key_bills_once(tiny):
    def send_again() -> str:
        with psycopg.connect(tiny.database_dsn, autocommit=True) as conn:
            conn.execute("INSERT INTO jobs (id, state) VALUES ('dup', 'queued') ON CONFLICT DO NOTHING")
        Celery(broker=tiny.redis_url).send_task("tiny.work", args=["dup", True])
        return "dup"

    dup = tiny.faults.duplicate_submission(send_again, times=2)
    assert dup.results == ["dup", "dup"]
    submissions = [e.data["number"] for e in tiny.history.events() if e.name == "submission"]
    assert submissions == [1, 2]
    wait_until(lambda: len([c for c in tiny.paidapi.ledger("dup") if c["state"] in ("done", "replayed")]) == 2,
               timeout=20, what="both deliveries to reach the paid API")
    assert len(tiny.paidapi.billed("dup")) == 1


def test_failpoint_fault_raises_in_the_app_until_healed(tiny):
    fp = tiny.faults.failpoint("tiny.after_processing", "raise", exception="RuntimeError",
                               match={"job_id": "f1"})
    submit(tiny, "f1")
    [trigger] = fp.wait(10)
    assert trigger["context"] == {"job_id": "f1"}
    assert tiny.paidapi.ledger("f1") == []
    fp.heal()
    assert tiny.failpoints.armed() == {}
    completes(tiny, "after-failpoint")
    never = tiny.faults.failpoint("tiny.nowhere", "sleep", seconds=1)
    with pytest.raises(FaultError, match="did not fire 1 time") as caught:
        never.wait(timeout=0.2)
    assert isinstance(caught.value, WaitTimeout) and caught.value.seen == []


class BrokenHeal(Fault, register=False):
    name = "broken_heal"

    def _inject(self):
        return {}

    def _heal(self):
        raise RuntimeError("cannot undo")


def test_heal_all_heals_the_others_when_one_heal_fails(tiny):
    down = tiny.faults.proxy_down("paidapi")
    tiny.faults.inject(BrokenHeal())
    with pytest.warns(UserWarning, match="cannot undo"):
        errors = tiny.faults.heal_all()
    assert [e.fault for e in errors] == ["broken_heal"]
    assert not down.injected and tiny.proxy.get_proxy("paidapi").enabled
    failed = [e for e in tiny.history.events() if e.source == "fault" and e.type == "fail"]
    assert [(e.name, e.data["fault"]) for e in failed] == [("heal", "broken_heal")]
    with pytest.raises(ExceptionGroup):  # still injected: the next heal_all tries again
        with pytest.warns(UserWarning):
            tiny.faults.heal_all(raise_errors=True)
    tiny.faults.injected.remove(next(f for f in tiny.faults if f.name == "broken_heal"))
