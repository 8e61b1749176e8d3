"""The nemesis's two rules that keep a printed scenario deterministic, on fake windows and workers.

A defence switched off stays off until the jobs the delaying faults exposed
are judged (not until a wall-clock time that a slow heal can overtake); a
worker that exited on its own is started again, unless a kill is yet to
fire, and never one a kill under way took down.
"""
from __future__ import annotations

from types import SimpleNamespace

from harness.nightly.nemesis import Nemesis
from harness.nightly.schedule import Planned

DEFENCE = Planned(at=1.0, lasts=10.0, kind="defence_off", extends_bound=False,
                  spec={"fault": "pause_service", "service": "sweeper", "defence_off": True})
KILL = Planned(at=3.0, lasts=2.0, kind="kill", spec={"fault": "kill_worker", "when": "now", "worker": "worker1"})
LATER_KILL = Planned(at=30.0, lasts=2.0, kind="kill", spec={"fault": "kill_worker", "when": "now"})


class FakeHistory:
    def __init__(self):
        self.events = []

    def record(self, source, kind, name, **fields):
        self.events.append((source, kind, name, fields))


class FakeWorkers:
    def __init__(self, dead):
        self.dead = list(dead)
        self.names = ["worker1", "worker2"]

    def replace_dead(self, keep=()):
        dead = [i for i in self.dead if i not in keep]
        self.dead = [i for i in self.dead if i in keep]
        return dead

    def __getitem__(self, index):
        return SimpleNamespace(name=self.names[index])


def nemesis(*faults, dead=()):
    run = SimpleNamespace(history=FakeHistory(), workers=FakeWorkers(dead))
    return Nemesis(run, tuple(faults), started=0.0)


def test_a_defence_stays_off_while_the_kill_it_overlaps_is_active():
    n = nemesis(DEFENCE, KILL)
    defence, kill = n.windows
    defence.injected_at, kill.injected_at = 1.0, 3.0
    assert not n.may_return(defence)


def test_a_defence_returns_only_once_the_jobs_accepted_before_the_last_heal_are_judged():
    n = nemesis(DEFENCE, KILL)
    defence, kill = n.windows
    defence.injected_at, kill.injected_at, kill.healed_at = 1.0, 3.0, 17.5  # a fresh worker took 12.5 s
    asked = []
    n.judged = lambda t: asked.append(t) or False
    assert not n.may_return(defence)
    assert asked == [17.5]  # counted from the actual heal, however late it came
    n.judged = lambda t: True
    assert n.may_return(defence)


def test_a_defence_ignores_faults_planned_after_it_and_faults_that_never_landed():
    n = nemesis(DEFENCE, KILL, LATER_KILL)
    defence, kill, later = n.windows
    defence.injected_at, kill.error = 1.0, "no worker to kill"  # the kill never landed
    later.injected_at = 30.0  # active, but planned after the defence's heal
    n.judged = lambda t: False
    assert n.may_return(defence)


def test_a_delaying_fault_heals_at_its_time():
    n = nemesis(DEFENCE, KILL)
    n.judged = lambda t: False
    assert n.may_return(n.windows[1])


def test_a_worker_that_exited_on_its_own_is_started_again_and_recorded():
    n = nemesis(DEFENCE, dead=[1])
    assert n.restart_exited_workers() == [1]
    [(source, kind, name, fields)] = n.run.history.events
    assert (source, kind, name, fields["data"]["worker"]) == ("nightly", "ok", "worker_restart", "worker2")


def test_no_worker_is_restarted_while_a_kill_is_under_way():
    n = nemesis(KILL, dead=[0])
    kill = n.windows[0]
    kill.fault, kill.injected_at = object(), 3.0  # killed, not healed: its heal starts the fresh worker
    assert n.restart_exited_workers() == []
    kill.healed_at = 8.0
    assert n.restart_exited_workers() == [0]


def test_a_kill_that_fired_keeps_only_its_own_worker_down():
    # worker1 killed by a kill under way (its heal replaces it); worker2 exited on its own meanwhile (the broker
    # went away under an ack): the next kill "now" of worker2 must find it running, not "already dead"
    n = nemesis(KILL, LATER_KILL, dead=[0, 1])
    fired, pending = n.windows
    fired.fault, fired.injected_at = SimpleNamespace(kill_record={"worker": "worker1"}, killed=[0]), 3.0
    pending.fault = SimpleNamespace(kill_record=None, killed=[])  # the kill being injected now: not fired yet
    assert n.restart_exited_workers() == []  # a kill yet to fire: nothing replaced under it
    assert n.restart_exited_workers(exclude=pending) == [1]
    assert n.run.workers.dead == [0]
