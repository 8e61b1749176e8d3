"""A job whose message a fault destroyed while the sweeper was off waits for the sweeper, not for a bug.

On fake windows, state logs and jobs: which jobs a whole-group kill or a
broker outage may have lost on their way to a worker (never one a worker
had at the kill: bringing that back is the broker's redelivery, what a
defence switched off is there to expose), and how the monitor judges them:
from the defence's return, and not before it.
"""
from __future__ import annotations

from types import SimpleNamespace

from harness.history.event import UNINDEXED, Event
from harness.nightly import monitor as monitor_module
from harness.nightly.monitor import Monitor
from harness.nightly.nemesis import Nemesis
from harness.nightly.schedule import Planned
from harness.nightly.transit import KILL, OUTAGE, Change, Loss, changes_by_job, lost_by

DEFENCE = Planned(at=1.0, lasts=10.0, kind="defence_off", extends_bound=False,
                  spec={"fault": "pause_service", "service": "sweeper", "defence_off": True})
KILL_AT = Planned(at=3.0, lasts=2.0, kind="kill", spec={"fault": "kill_worker", "when": {"at_failpoint": {
    "name": "task.after_paid_call"}}})
OUTAGE_AT = Planned(at=4.0, lasts=2.0, kind="broker", spec={"fault": "broker_outage"})


def state(t, job, writer):
    return Event(UNINDEXED, t, 0.0, "job", "ok", "state", job, 1, {"state": "x", "writer": writer})


def test_each_change_says_whether_a_worker_or_a_writer_nobody_knows_wrote_it():
    changes = changes_by_job([state(2.0, "a", "jobquake:worker1:81"), state(1.0, "a", "jobquake:api:70"),
                              state(3.0, "a", "jobquake:relay"), state(4.0, "a", "psql"), state(5.0, "a", None),
                              Event(UNINDEXED, 1.0, 0.0, "heartbeat", "ok", "beat", "a", 1, {})],
                             workers=["worker1", "worker2"])
    assert changes == {"a": [Change(1.0, False), Change(2.0, True), Change(3.0, False), Change(4.0, True),
                             Change(5.0, True)]}


KILL_LOSS = Loss(t=10.0, fault=KILL, index=1, defence=0)
OUTAGE_LOSS = Loss(t=10.0, fault=OUTAGE, index=2, defence=0)
API, WORKER = Change(5.0, False), Change(9.0, True)  # accepted by the API; claimed by a worker


def test_a_kill_may_take_a_job_waiting_for_a_worker_and_no_job_a_worker_had():
    assert lost_by(5.0, [API], [KILL_LOSS]) == KILL_LOSS  # waiting: its message may be the one taken
    assert lost_by(5.0, [API, WORKER, Change(9.5, False)], [KILL_LOSS]) == KILL_LOSS  # sent again since
    assert lost_by(5.0, [API, WORKER], [KILL_LOSS]) is None  # in a task at the kill: the broker's to redeliver
    assert lost_by(5.0, [API, Change(12.0, True)], [KILL_LOSS]) is None  # a worker took it after: not lost
    assert lost_by(11.0, [Change(11.0, False)], [KILL_LOSS]) is None  # accepted after the kill
    assert lost_by(5.0, [], [KILL_LOSS]) is None  # the state log does not show it yet: no evidence


def test_an_outage_may_take_any_job_no_worker_changed_after_it():
    assert lost_by(5.0, [API, WORKER], [OUTAGE_LOSS]) == OUTAGE_LOSS  # even the running task's message
    assert lost_by(5.0, [API, Change(12.0, True)], [OUTAGE_LOSS]) is None
    assert lost_by(5.0, [API, WORKER], [KILL_LOSS, OUTAGE_LOSS]) == OUTAGE_LOSS


def nemesis_with(*faults):
    run = SimpleNamespace(history=SimpleNamespace(record=lambda *a, **k: None))
    return Nemesis(run, tuple(faults), started=100.0)


def test_the_nemesis_lists_only_message_losses_that_came_while_a_defence_was_off():
    n = nemesis_with(DEFENCE, KILL_AT, OUTAGE_AT)
    defence, kill, outage = n.windows
    defence.injected_at, defence.healed_at = 1.0, 11.0
    kill.fault = SimpleNamespace(kill_record={"group": True, "killed_t": 103.5})
    outage.fault = SimpleNamespace(outage={"stopped_t": 112.0})  # after the defence returned
    assert n.losses() == [Loss(103.5, KILL, 1, 0)]
    kill.fault = SimpleNamespace(kill_record={"group": False, "killed_t": 103.5})  # SIGTERM to the main process
    assert n.losses() == []
    defence.healed_at = None  # still off (held)
    assert n.losses() == [Loss(112.0, OUTAGE, 2, 0)]


def test_a_poison_row_is_no_defence_switched_off():
    poison = Planned(at=1.0, lasts=10.0, kind="poison", extends_bound=False,
                     spec={"fault": "poison_row", "table": "invoices"})
    n = nemesis_with(poison, KILL_AT)
    n.windows[0].injected_at = 1.0
    n.windows[1].fault = SimpleNamespace(kill_record={"group": True, "killed_t": 103.5})
    assert n.losses() == []  # the sweeper is on: it brings back what the kill lost, within the bound


class FakeWorkload:
    def __init__(self, accepted):
        self.accepted = accepted
        self.stats = SimpleNamespace(submitted=len(accepted), accepted=len(accepted), refused=0)

    def accepted_at(self):
        return dict(self.accepted)


def monitor(events, *, killed_t=103.5):
    recorded = []
    run = SimpleNamespace(jobs=SimpleNamespace(terminal_states=("done",)),
                          workers=SimpleNamespace(workers=[SimpleNamespace(name="worker1")]),
                          history=SimpleNamespace(record=lambda *a, **k: recorded.append((a, k)),
                                                  events=lambda: events))
    n = nemesis_with(DEFENCE, KILL_AT)
    defence, kill = n.windows
    defence.injected_at = 1.0
    kill.injected_at, kill.healed_at = 3.0, 5.0
    kill.fault = SimpleNamespace(kill_record={"group": True, "killed_t": killed_t})
    m = Monitor(run, FakeWorkload({"killed": 102.0, "waiting": 103.0, "later": 104.0}), n, job_bound=20.0)
    m.completed["later"] = 6.0  # a job accepted after them ended: they are not behind a backlog
    return m, n, recorded


def judge_at(m, n, now, monkeypatch):
    monkeypatch.setattr(monitor_module, "time", SimpleNamespace(monotonic=lambda: n.started + now))
    m._judge({}, {"waiting": "queued", "killed": "running"}, SimpleNamespace())


def test_a_job_lost_on_the_way_waits_for_the_defence_and_a_job_whose_task_died_is_stuck_at_its_bound(monkeypatch):
    events = [state(102.0, "killed", "jobquake:api:7"), state(103.0, "waiting", "jobquake:api:7"),
              state(102.5, "killed", "jobquake:worker1:9")]  # claimed before the kill, never changed since
    m, n, recorded = monitor(events)
    n.judged = m.judged_before
    assert not n.may_return(n.windows[0])  # the jobs the kill exposed are not judged yet
    judge_at(m, n, 27.0, monkeypatch)  # past both jobs' bound (from 6 s, when a later job ended)
    assert set(m.stuck) == {"killed"}  # the broker had to bring it back: the defence_off kind exposes this
    assert set(m.in_transit) == {"waiting"}
    assert sorted(a[2] for a, _k in recorded) == ["in_transit", "stuck"]  # each recorded, once
    assert n.may_return(n.windows[0])  # both judged: the defence may return now
    judge_at(m, n, 40.0, monkeypatch)
    assert "waiting" not in m.stuck  # the defence is still off: not judged yet
    n.windows[0].healed_at = 30.0
    judge_at(m, n, 49.0, monkeypatch)
    assert "waiting" not in m.stuck  # 19 s after the defence returned
    judge_at(m, n, 51.0, monkeypatch)
    assert m.stuck["waiting"] == 51.0  # 21 s after: the defence had its time
    assert sum(a[2] == "in_transit" for a, _k in recorded) == 1


def test_a_job_the_state_log_does_not_show_is_not_excused(monkeypatch):
    m, n, _ = monitor([])  # the log could not be read yet
    judge_at(m, n, 27.0, monkeypatch)
    assert set(m.stuck) == {"waiting", "killed"} and not m.in_transit


def test_without_a_loss_the_history_is_not_read(monkeypatch):
    m, n, _ = monitor([])
    n.windows[1].fault = SimpleNamespace(kill_record=None)  # the kill never fired: nothing was lost
    m.run.history.events = lambda: (_ for _ in ()).throw(AssertionError("read the whole history"))
    judge_at(m, n, 27.0, monkeypatch)
    assert set(m.stuck) == {"waiting", "killed"} and not m.in_transit
