"""Failpoints in other processes: armed from here, observed in real child processes."""
from __future__ import annotations

import os
import signal

import pytest

from harness import failpoints
from harness._wait import wait_until
from harness.failpoints import failpoint
from harness.failpoints.control import FailpointControl
from tests.common.processes import alive
from tests.unit.failpoint_child import ChildProcess


@pytest.fixture
def control(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp")
    yield ctl
    ctl.disarm_all()  # lets go any child still hung


@pytest.fixture
def spawn(tmp_path, control):
    children: list[ChildProcess] = []

    def start(env: dict[str, str] | None = None) -> ChildProcess:
        child = ChildProcess(control.env() if env is None else env,
                             tmp_path / f"child-{len(children)}.stderr")
        children.append(child)
        return child

    yield start
    for child in children:
        child.close()


def test_arming_is_visible_to_a_running_process_as_soon_as_arm_returns(control, spawn):
    child = spawn()
    assert child.ask(op="call", name="submit.after_job_write") == {"value": None}  # cached: unarmed
    control.arm("submit.after_job_write", "raise", exception="sqlalchemy.exc.OperationalError",
                message="db went away")
    reply = child.ask(op="call", name="submit.after_job_write", context={"job_id": "j1"})
    assert reply["raised"] == "sqlalchemy.exc.OperationalError"
    assert "db went away" in reply["message"]
    control.disarm("submit.after_job_write")
    assert child.ask(op="call", name="submit.after_job_write") == {"value": None}


def test_child_without_the_env_var_ignores_armed_failpoints(control, spawn):
    control.arm("p", "raise", exception="ValueError")
    child = spawn(env={})
    assert child.ask(op="call", name="p") == {"value": None}
    assert control.triggers() == []


def test_trigger_records_the_child_pid_and_context(control, spawn):
    child = spawn()
    armed = control.arm("p", "return", value=7)
    assert child.ask(op="call", name="p", context={"job_id": "j9"}) == {"value": 7}
    [trigger] = armed.triggers()
    assert trigger["pid"] == child.proc.pid
    assert trigger["context"] == {"job_id": "j9"}


def test_hang_holds_the_child_until_release(control, spawn):
    child = spawn()
    armed = control.arm("relay.before_send", "hang")
    child.send(op="call", name="relay.before_send")
    armed.wait(timeout=10)
    assert not child.has_answer()  # fired, and still inside the failpoint
    armed.release()
    assert child.receive(timeout=10) == {"value": None}


def test_kill_sigkills_the_calling_process(control, spawn):
    child = spawn()
    armed = control.arm("worker.mid_job", "kill")
    child.send(op="call", name="worker.mid_job", context={"job_id": "j1"})
    assert child.proc.wait(10) == -signal.SIGKILL
    assert armed.triggers()[0]["pid"] == child.proc.pid  # on record before it died


def test_kill_group_takes_down_the_whole_process_group(control, spawn):
    child = spawn()
    sleeper = child.ask(op="spawn_sleeper")["pid"]
    assert os.getpgid(sleeper) == child.proc.pid  # the child leads its own group
    control.arm("worker.mid_job", "kill", group=True)
    child.send(op="call", name="worker.mid_job")
    assert child.proc.wait(10) == -signal.SIGKILL
    wait_until(lambda: not alive(sleeper), timeout=10, what="the child's sleeper to die")


@pytest.mark.parametrize("condition, expected", [({"once": True}, 1), ({"times": 5}, 5)])
def test_counts_are_shared_by_concurrent_processes(control, spawn, condition, expected):
    children = [spawn() for _ in range(3)]
    for child in children:
        child.ask(op="call", name="warm.up")  # imported and mapped before the race starts
    armed = control.arm("race.point", "return", value=1, **condition)
    for child in children:
        child.send(op="loop", name="race.point", count=300)
    fired = [child.receive(timeout=30)["fired"] for child in children]
    assert sum(fired) == expected
    assert sorted(t["hit"] for t in armed.triggers()) == list(range(1, expected + 1))


def test_probability_replays_across_processes(control, spawn):
    def run(seed):
        control.reset()
        control.arm("p", "return", value=1, probability=0.5, seed=seed)
        first, second = spawn(), spawn()
        first.send(op="loop", name="p", count=100)
        second.send(op="loop", name="p", count=100)
        first.receive(timeout=30), second.receive(timeout=30)
        return sorted(t["hit"] for t in control.triggers("p"))

    assert run(seed=3) == run(seed=3)
    assert run(seed=3) != run(seed=4)


def test_a_forked_child_shares_the_mapping_and_the_once_count(control):
    failpoints.configure(control.path)
    try:
        assert failpoint("fork.point") is None  # the parent has mapped the state and cached it
        armed = control.arm("fork.point", "return", value=1, once=True)
        pid = os.fork()
        if pid == 0:  # the child: exit code says whether it fired
            code = 0 if failpoint("fork.point") == 1 else 3
            os._exit(code)
        parent_fired = failpoint("fork.point") == 1
        _, status = os.waitpid(pid, 0)
        child_fired = os.waitstatus_to_exitcode(status) == 0
        assert parent_fired + child_fired == 1
        assert {t["pid"] for t in armed.triggers()} == {pid if child_fired else os.getpid()}
    finally:
        failpoints.configure(None)
