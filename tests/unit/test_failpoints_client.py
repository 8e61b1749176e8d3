"""Failpoints in this process: each action and each condition, armed through the control directory."""
from __future__ import annotations

import os
import threading
import time

import pytest
import sqlalchemy.exc

from harness import failpoints
from harness.errors import FaultError
from harness.failpoints import _registry, failpoint
from harness.failpoints.control import FailpointControl


@pytest.fixture
def control(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp", seed=11)
    failpoints.configure(ctl.path)
    yield ctl
    ctl.disarm_all()
    failpoints.configure(None)
    for registry in (_registry.resources, _registry.callbacks, _registry.exception_factories):
        registry.clear()


def test_unconfigured_failpoint_is_a_noop(tmp_path):
    failpoints.configure(None)
    assert failpoint("anything", job_id="j1") is None
    assert failpoints.configured_dir() is None


def test_configured_but_unarmed_returns_none_and_records_nothing(control):
    control.arm("other.point", "raise", exception="ValueError")
    assert failpoint("quiet.point", job_id="j1") is None
    assert control.triggers() == []


def test_raise_builtin_with_message_and_note(control):
    control.arm("submit.after_job_write", "raise", exception="ValueError", message="boom")
    with pytest.raises(ValueError) as info:
        failpoint("submit.after_job_write", job_id="j1")
    assert str(info.value) == "boom"
    assert any("submit.after_job_write" in note for note in info.value.__notes__)


def test_raise_sqlalchemy_operational_error_is_built_with_its_extra_arguments(control):
    control.arm("db.write", "raise", exception="sqlalchemy.exc.OperationalError", message="server closed")
    with pytest.raises(sqlalchemy.exc.OperationalError, match="server closed"):
        failpoint("db.write")


def test_raise_with_explicit_args_and_with_a_registered_factory(control):
    control.arm("a", "raise", exception="OSError", args=[28, "No space left"])
    with pytest.raises(OSError) as info:
        failpoint("a")
    assert info.value.errno == 28

    failpoints.register_exception_factory("subprocess.TimeoutExpired",
                                          lambda msg: __import__("subprocess").TimeoutExpired(msg, 5))
    control.arm("b", "raise", exception="subprocess.TimeoutExpired", message="convert")
    with pytest.raises(Exception, match="'convert' timed out after 5 seconds"):
        failpoint("b")


def test_trigger_records_context_pid_action_and_hit(control):
    armed = control.arm("p", "return", value="v")
    before = time.monotonic()
    assert failpoint("p", job_id="j-7", attempt=2) == "v"
    [trigger] = armed.triggers()
    assert trigger["name"] == "p" and trigger["action"] == "return"
    assert trigger["context"] == {"job_id": "j-7", "attempt": 2}
    assert trigger["pid"] == os.getpid() and trigger["hit"] == 1 and trigger["arm"] == armed.arm
    assert before <= trigger["t"] <= time.monotonic()


def test_sleep_delays_the_caller(control):
    control.arm("slow", "sleep", seconds=0.05)
    started = time.monotonic()
    assert failpoint("slow") is None
    assert time.monotonic() - started >= 0.05


def test_hang_blocks_until_released(control):
    armed = control.arm("stuck", "hang")
    done = threading.Event()
    caller = threading.Thread(target=lambda: (failpoint("stuck", job_id="j1"), done.set()))
    caller.start()
    armed.wait(timeout=5)
    assert not done.is_set()  # fired, and the caller is still inside the failpoint
    armed.release()
    caller.join(5)
    assert done.is_set()


def test_hang_gives_up_at_its_bound(control):
    control.arm("stuck", "hang", timeout=0.05)
    started = time.monotonic()
    failpoint("stuck")
    assert 0.05 <= time.monotonic() - started < 5


def test_disarm_lets_a_hung_caller_go(control):
    control.arm("stuck", "hang")
    caller = threading.Thread(target=failpoint, args=("stuck",))
    caller.start()
    control.wait_triggered("stuck", timeout=5)
    control.disarm("stuck")
    caller.join(5)
    assert not caller.is_alive()


def test_callback_gets_context_and_armed_kwargs_and_its_result_is_returned(control):
    seen = []
    failpoints.register_callback("note", lambda ctx, **kw: seen.append((ctx, kw)) or "done")
    control.arm("cb", "callback", callback="note", kwargs={"why": "test"})
    assert failpoint("cb", job_id="j1") == "done"
    assert seen == [({"job_id": "j1"}, {"why": "test"})]


def test_missing_callback_fails_loudly_in_app_and_harness(control):
    armed = control.arm("cb", "callback", callback="nobody-registered-this")
    with pytest.raises(FaultError, match="no callback registered"):
        failpoint("cb")
    with pytest.raises(FaultError, match="nobody-registered-this"):
        armed.wait(timeout=5)


def test_once_fires_once(control):
    control.arm("p", "return", value=1, once=True)
    assert [failpoint("p") for _ in range(5)] == [1, None, None, None, None]


def test_times_fires_n_times_and_counts_every_hit(control):
    armed = control.arm("p", "return", value=1, times=3)
    assert sum(failpoint("p") is not None for _ in range(10)) == 3
    assert [t["hit"] for t in armed.triggers()] == [1, 2, 3]


def test_match_fires_only_for_matching_context(control):
    armed = control.arm("p", "return", value="hit", match={"job_id": "X", "attempt": 2})
    assert failpoint("p", job_id="Y", attempt=2) is None
    assert failpoint("p", job_id="X") is None  # a key of the match is missing
    assert failpoint("p", job_id="X", attempt=2) == "hit"  # 2 == "2": compared as strings
    assert [t["context"]["job_id"] for t in armed.triggers()] == ["X"]


def _firing_hits(control, seed):
    control.reset()
    control.arm("p", "return", value=1, probability=0.3, seed=seed)
    for _ in range(200):
        failpoint("p")
    return [t["hit"] for t in control.triggers("p")]


def test_probability_with_a_seed_replays_exactly(control):
    first = _firing_hits(control, seed=5)
    assert _firing_hits(control, seed=5) == first
    assert _firing_hits(control, seed=6) != first
    assert 30 <= len(first) <= 90  # about 30% of 200


def test_rearming_starts_counts_over(control):
    control.arm("p", "return", value=1, once=True)
    assert failpoint("p") == 1 and failpoint("p") is None
    control.arm("p", "return", value=2, once=True)
    assert failpoint("p") == 2


def test_is_armed_says_what_failpoint_would_act_on(control):
    assert not failpoints.is_armed("p")
    control.arm("p", "return", value=1)
    assert failpoints.is_armed("p") and not failpoints.is_armed("q")
    control.disarm("p")
    assert not failpoints.is_armed("p")


def test_a_framework_hook_builds_no_context_while_its_point_is_unarmed(control, monkeypatch):
    from harness.instrument import _context, _fire

    monkeypatch.setattr(_context, "current", lambda: pytest.fail("the job's context was built for an unarmed point"))
    assert _fire.fire("sqlalchemy.pool_checkout") is None
