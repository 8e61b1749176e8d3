"""Faults by name and spec, parameter checks, and the inject/heal contract, without services."""
from __future__ import annotations

import signal
from types import SimpleNamespace

import pytest

from harness.errors import FaultError
from harness.faults import (
    FAULTS, AtFailpoint, Fault, FaultHealWarning, Faults, InFlight, KillWorker, Now, Queued, from_spec,
    make_fault,
)
from harness.faults.fault_set import FaultMethod
from harness.history import Recorder


def submit_nothing() -> None:
    """A submit callable that spec files can name as 'tests.unit.test_faults_registry:submit_nothing'."""


EXAMPLES = {
    "kill_worker": {"signal": "SIGTERM", "when": {"in_flight": {"job_id": "x"}}},
    "pause_service": {"service": "redis"},
    "stop_service": {"service": "sweeper"},
    "paidapi_mode": {"mode": "slow", "seconds": 60, "job_id": "x"},
    "hang_endpoint": {"layer": "network", "stream": "upstream"},
    "network_toxic": {"proxy": "paidapi", "type": "latency", "latency": 200, "jitter": 10},
    "proxy_down": {"proxy": "paidapi"},
    "exhaust_pool": {"at": "submit.after_job_write", "match": {"job_id": "x"}},
    "hold_database_connections": {},
    "poison_row": {"table": "items", "values": {"id": 2, "value": "poison"}, "key": ["id"]},
    "broker_outage": {},
    "database_restart": {"down_for": 0.5},
    "duplicate_submission": {"submit": "tests.unit.test_faults_registry:submit_nothing", "times": 3},
    "failpoint": {"at": "task.before_final_write", "action": "sleep", "seconds": 0.5, "once": True},
}


def test_every_registered_fault_has_an_example_here():
    assert sorted(FAULTS) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_spec_rebuilds_the_same_fault(name):
    fault = make_fault(name, **EXAMPLES[name])
    assert isinstance(fault, FAULTS[name]) and fault.name == name
    again = from_spec(fault.spec())
    assert type(again) is type(fault) and again.spec() == fault.spec()


def test_when_is_parsed_from_plain_data():
    fault = from_spec({"fault": "kill_worker", "when": {"at_failpoint": {"name": "a.b", "match": {"job_id": 1}}}})
    assert isinstance(fault.when, AtFailpoint) and fault.when.match == {"job_id": 1}
    assert isinstance(make_fault("kill_worker", when="now").when, Now)
    assert isinstance(KillWorker(when=InFlight("j")).when, InFlight)
    assert KillWorker(signal=15).signal == signal.SIGTERM and KillWorker(signal="kill").signal == signal.SIGKILL


def test_a_kill_in_flight_without_a_job_waits_for_any_jobs_call():
    fault = from_spec({"fault": "kill_worker", "when": {"in_flight": {}}})
    assert isinstance(fault.when, InFlight) and fault.when.job_id is None and fault.when.step is None
    assert from_spec(fault.spec()).spec() == fault.spec()
    assert fault.spec()["when"] == {"in_flight": {"job_id": None, "step": None, "timeout": 30.0}}


def test_a_broker_outage_takes_a_moment_and_now_keeps_its_old_spec():
    assert from_spec({"fault": "broker_outage"}).spec() == {"fault": "broker_outage"}
    outage = from_spec({"fault": "broker_outage", "when": {"queued": {"job_id": "j"}}})
    assert isinstance(outage.when, Queued) and outage.when.job_id == "j"
    assert outage.spec() == {"fault": "broker_outage", "when": {"queued": {"job_id": "j", "timeout": 30.0}}}
    assert isinstance(make_fault("broker_outage", when=AtFailpoint("relay.after_send")).when, AtFailpoint)


def test_sigkill_goes_to_the_group_and_other_signals_to_the_main_process():
    assert KillWorker().group is True
    assert KillWorker(signal="SIGTERM").group is False
    assert KillWorker(signal="SIGTERM", group=True).group is True


@pytest.mark.parametrize("name, params, message", [
    ("no_such_fault", {}, "unknown fault; known: broker_outage"),
    ("kill_worker", {"victim": 1}, "bad parameters"),
    ("kill_worker", {"worker": 3}, "worker must be"),
    ("kill_worker", {"worker": "worker1", "when": {"in_flight": {"job_id": "x"}}}, "names the worker itself"),
    ("paidapi_mode", {"mode": "hang"}, "use hang_endpoint"),
    ("paidapi_mode", {"mode": "slow"}, "seconds=... or factor="),
    ("stop_service", {"service": ""}, "service"),
    ("kill_worker", {"signal": "SIGNOPE"}, "is not a signal"),
    ("kill_worker", {"when": {"soon": {}}}, "when = "),
    ("kill_worker", {"when": {"in_flight": {"job_id": 3}}}, "job_id"),
    ("kill_worker", {"replace": "yes"}, "replace must be True or False"),
    ("pause_service", {}, "bad parameters"),
    ("hang_endpoint", {"layer": "disk"}, "layer must be one of"),
    ("hang_endpoint", {"layer": "network", "job_id": "x"}, "sees bytes"),
    ("hang_endpoint", {"layer": "network", "mid_stream": True}, "provider mode"),
    ("network_toxic", {"proxy": "paidapi", "type": "jitter"}, "unknown toxic type"),
    ("network_toxic", {"proxy": "paidapi", "type": "latency", "rate": 1}, "has no attribute rate"),
    ("network_toxic", {"proxy": "paidapi", "type": "latency", "latency": -1}, "non-negative int"),
    ("network_toxic", {"proxy": "paidapi", "type": "latency", "toxicity": 2}, "between 0 and 1"),
    ("network_toxic", {"proxy": "paidapi", "type": "latency", "stream": "sideways"}, "stream must be"),
    ("poison_row", {"table": "items"}, "either values"),
    ("poison_row", {"table": "items", "values": {"id": 1}, "insert": print}, "either values"),
    ("poison_row", {"table": "items", "values": {"id": 1}, "key": ["other"]}, "key must be"),
    ("duplicate_submission", {"submit": submit_nothing, "times": 1}, "times must be an int >= 2"),
    ("duplicate_submission", {"submit": "no.such.module:fn"}, "cannot be imported"),
    ("failpoint", {"at": "x", "action": "explode"}, "unknown action"),
    ("failpoint", {"at": "x", "action": "sleep"}, "needs seconds="),
    ("exhaust_pool", {"at": "x", "timeout": -1}, "must not be negative"),
    ("broker_outage", {"port": 1}, "bad parameters"),
    ("broker_outage", {"when": {"queued": {"job_id": ""}}}, "queued.job_id must be"),
    ("broker_outage", {"when": {"queued": {"timeout": 0}}}, "queued.timeout must be"),
    ("broker_outage", {"when": {"soon": {}}}, "when = "),
    ("kill_worker", {"when": {"queued": {}}}, "names no worker to kill"),
    ("database_restart", {"down_for": -1}, "down_for must be a positive number"),
])
def test_bad_names_and_parameters_raise_fault_errors_naming_the_fault(name, params, message):
    with pytest.raises(FaultError, match=message) as info:
        make_fault(name, **params)
    assert info.value.fault == name


def test_a_spec_without_a_fault_key_is_refused():
    with pytest.raises(FaultError, match="'fault' key"):
        from_spec({"proxy": "paidapi"})


# -- the inject / heal contract, on a fault that touches nothing ----------------------
class Switch(Fault, register=False):
    name = "switch"

    def __init__(self, fail_inject: bool = False, fail_heal: bool = False):
        super().__init__()
        self.on = False
        self.fail_inject, self.fail_heal = fail_inject, fail_heal

    def params(self):
        return {"fail_inject": self.fail_inject}

    def _inject(self):
        if self.fail_inject:
            raise OSError("no such device")
        self.on = True
        return {"on": True}

    def _heal(self):
        if self.fail_heal:
            raise RuntimeError("stuck")
        self.on = False
        return {}


@pytest.fixture
def run(tmp_path):
    recorder = Recorder(tmp_path / "history.jsonl")
    yield SimpleNamespace(history=recorder)
    recorder.close()


def fault_events(run):
    return [(e.type, e.name, e.data["fault"]) for e in run.history.events() if e.source == "fault"]


def test_inject_and_heal_are_recorded_and_heal_is_idempotent(run):
    switch = Switch().bind(run)
    switch.heal()  # never injected: nothing to do
    with switch:
        assert switch.on and switch.injected
    switch.heal()
    assert not switch.on
    assert fault_events(run) == [("invoke", "inject", "switch"), ("ok", "inject", "switch"),
                                 ("invoke", "heal", "switch"), ("ok", "heal", "switch")]
    ok = run.history.events()[1]
    assert ok.data == {"fault": "switch", "params": {"fail_inject": False}, "on": True}
    switch.inject()  # once healed, it can be injected again
    with pytest.raises(FaultError, match="already injected"):
        switch.inject()


def test_a_fault_whose_trigger_names_a_job_is_recorded_as_that_jobs_event(run):
    """A kill at a job's held call says so in the details it records: that job's timeline shows it."""
    switch = Switch().bind(run)
    switch.record("ok", "inject", job_id="j-7", call_id=3)
    switch.record("ok", "heal")
    named, plain = [e for e in run.history.events() if e.source == "fault"]
    assert (named.job_id, named.data["job_id"]) == ("j-7", "j-7")
    assert plain.job_id is None


def test_a_failed_injection_is_recorded_and_raised_as_a_fault_error(run):
    with pytest.raises(FaultError, match="fault 'switch': cannot inject: OSError: no such device"):
        Switch(fail_inject=True).inject(run)
    assert fault_events(run)[-1] == ("fail", "inject", "switch")


def test_an_unbound_fault_says_how_to_bind_it():
    with pytest.raises(FaultError, match="not bound to a run"):
        Switch().inject()


def test_heal_all_heals_every_fault_and_reports_each_failure(run):
    faults = Faults(run)
    first, broken, last = Switch(), Switch(fail_heal=True), Switch()
    for fault in (first, broken, last):
        faults.inject(fault)
    with pytest.warns(FaultHealWarning, match="cannot heal: RuntimeError: stuck"):
        errors = faults.heal_all()
    assert [e.fault for e in errors] == ["switch"] and not first.on and not last.on
    assert broken.injected  # stays injected: the next heal_all tries again
    broken.fail_heal = False
    assert faults.heal_all() == [] and not broken.on


def test_heal_all_can_raise_every_error_at_once(run):
    faults = Faults(run)
    faults.inject(Switch(fail_heal=True))
    faults.inject(Switch(fail_heal=True))
    with pytest.warns(FaultHealWarning), pytest.raises(ExceptionGroup) as info:
        faults.heal_all(raise_errors=True)
    assert len(info.value.exceptions) == 2


def test_jq_faults_has_one_method_per_registered_fault_with_its_signature():
    import inspect

    import harness.faults

    for name, cls in FAULTS.items():
        method = getattr(Faults, name)
        assert list(inspect.signature(method).parameters)[1:] == list(inspect.signature(cls).parameters)
        assert cls.__name__ in harness.faults.__all__ and getattr(harness.faults, cls.__name__) is cls
        assert f"jq.faults.{name}(" in Faults.__doc__  # the generated table


def test_the_typed_methods_of_jq_faults_are_the_registry():
    """What a type checker sees of ``jq.faults`` (its ``FaultMethod`` lines) is exactly what is registered."""
    typed = {name: member.cls for name, member in vars(Faults).items() if isinstance(member, FaultMethod)}
    assert list(typed.items()) == list(FAULTS.items()), \
        "harness/faults/fault_set.py: Faults needs one `name = FaultMethod(Class)` line per registered fault"


def test_a_fault_method_named_otherwise_than_its_fault_is_refused():
    with pytest.raises((TypeError, RuntimeError)) as info:  # 3.11 wraps __set_name__'s error in a RuntimeError
        class Misnamed:  # noqa: F841 - defining the class is the test
            kill = FaultMethod(KillWorker)
    assert "Misnamed.kill injects KillWorker, which is registered as 'kill_worker'" in str(info.value.__cause__ or info.value)


def test_an_unknown_fault_of_jq_faults_lists_the_known_ones():
    faults = Faults(SimpleNamespace())
    with pytest.raises(AttributeError, match=r"no fault 'kil_worker'; did you mean 'kill_worker'\? known: .*stop_service"):
        faults.kil_worker()
    assert not hasattr(faults, "_private")


def test_a_private_fault_class_does_not_register():
    assert "switch" not in FAULTS
