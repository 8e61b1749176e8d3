"""The nightly schedule: drawn from the seed alone, stored and read back byte for byte."""
from __future__ import annotations

import pytest

from harness.errors import ConfigError
from harness.nightly.kinds import Target, supported
from harness.nightly.schedule import Schedule, draw, shard_seed

TARGET = Target(workers=2, pause_services=("relay", "worker1"), defences=("sweeper",),
                pool_failpoint="submit.after_job_write", kill_failpoints=("task.claimed",))
KINDS = ("kill", "hang", "pool", "pause", "defence_off", "latency")


def schedule(seed: int, **kw) -> Schedule:
    return draw(seed=seed, duration=kw.pop("duration", 600), kinds=kw.pop("kinds", KINDS),
                target=TARGET, **kw)


def test_the_same_seed_gives_the_same_schedule_byte_for_byte():
    assert schedule(7).to_json() == schedule(7).to_json()
    assert schedule(7).to_json() != schedule(8).to_json()


def test_a_stored_schedule_reads_back_unchanged():
    text = schedule(11).to_json()
    assert Schedule.from_json(text).to_json() == text


def test_faults_overlap_heal_within_the_run_and_leave_a_quiet_tail():
    s = schedule(3, duration=600)
    assert len(s.faults) > 10
    assert all(0 <= f.at < 600 * 0.8 and f.heal_at <= 600 for f in s.faults)
    overlapping = [a for a, b in zip(s.faults, s.faults[1:]) if b.at < a.heal_at]
    assert overlapping, "a long schedule has faults that overlap"
    assert {f.kind for f in s.faults} <= set(KINDS)


def test_every_planned_fault_is_a_registry_spec():
    from harness.faults import from_spec

    for planned in schedule(5).faults:
        assert from_spec(planned.spec).name == planned.spec["fault"]


def test_shards_get_different_seeds_derived_from_the_run_seed():
    seeds = {shard_seed(42, i, 4) for i in range(4)}
    assert len(seeds) == 4 and seeds == {shard_seed(42, i, 4) for i in range(4)}
    assert shard_seed(42, 0, 1) == 42


def test_an_unknown_kind_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="unknown fault kind 'explode'.*kill"):
        schedule(1, kinds=["explode"])


def test_a_kind_with_nothing_to_aim_at_is_refused():
    with pytest.raises(ConfigError, match="defence_off"):
        draw(seed=1, duration=60, kinds=["defence_off"], target=Target())


POISON = (("key", ["customer"]), ("table", "invoices"), ("values", {"customer": "bad", "amount": "-5"}))


def test_poison_rows_come_with_a_sweep_workload_and_only_then():
    poisoned = draw(seed=3, duration=120, kinds=["poison"], target=Target(poison=POISON), sweep_every=4)
    assert poisoned.faults and poisoned.sweep_every == 4.0
    assert all(f.spec == {"fault": "poison_row", "table": "invoices", "key": ["customer"],
                          "values": {"customer": "bad", "amount": "-5"}} and not f.extends_bound
               for f in poisoned.faults)
    assert Schedule.from_json(poisoned.to_json()) == poisoned
    assert "sweep_every" not in schedule(3).to_json()  # a schedule without a sweep reads as before


def test_poison_needs_a_poison_row_declared():
    with pytest.raises(ConfigError, match="poison"):
        draw(seed=1, duration=60, kinds=["poison"], target=TARGET)


def test_a_printed_scenario_with_a_sweep_judges_the_sweep():
    from harness.nightly.scenario_writer import scenario_source

    poisoned = draw(seed=3, duration=60, kinds=["poison"], target=Target(poison=POISON))
    text = scenario_source(poisoned, invariant="sweep_complete", message="run 3 did not end")
    assert '"sweep_complete"' in text and "sweep_every=5.0" in text and '"abandoned"' in text
    compile(text, "scenario.py", "exec")
    plain = scenario_source(schedule(3, duration=60), invariant="x", message="y")
    assert "sweep_complete" not in plain and "sweep_every" not in plain


def test_every_drawn_kill_waits_for_a_moment_mid_job():
    # a kill "now" may find its worker idle: it lands on nothing and its run cannot be replayed
    kills = [f.spec for f in schedule(4, duration=3600, kinds=["kill"]).faults]
    moments = {str(k["when"]) for k in kills}
    assert moments == {str({"in_flight": {}}), str({"at_failpoint": {"name": "task.claimed"}})}
    assert all("worker" not in k for k in kills)


def test_by_default_a_nightly_draws_every_kind_the_app_can_take():
    assert supported(TARGET) == ("kill", "hang", "pool", "pause", "defence_off", "latency", "broker", "database")
    with_poison = Target(workers=2, poison=(("table", "invoices"), ("values", {"amount": "-5"})))
    assert "poison" in supported(with_poison) and "pool" not in supported(with_poison)


def test_replicas_are_drawn_from_the_seed_without_moving_the_faults():
    plain, replicated = schedule(7), schedule(7, replicas_of=("relay", "sweeper"))
    assert replicated.faults == plain.faults and "replicas" not in plain.to_dict()
    assert set(replicated.replicas) == {"relay", "sweeper"} and set(replicated.replicas.values()) <= {1, 2}
    assert schedule(7, replicas_of=("relay", "sweeper")).replicas == replicated.replicas
    assert Schedule.from_json(replicated.to_json()).replicas == replicated.replicas
