"""The fault kinds a nightly schedule draws from, each a recipe for a registry fault spec.

A kind draws the parameters of one fault from the schedule's RNG and says
how long it may last. The fault itself is built from the spec by the
registry (``harness.faults.from_spec``), exactly as a scenario would build
it, so a shrunk schedule prints as a scenario with the same faults.

``extends_bound``: while a fault of this kind is active, and until the
job bound has passed after it healed, a slow job is the fault's doing, not
the app's. A kind that only switches a defence off (``defence_off``: the
sweeper paused while the broker is still there to redeliver) does not
extend it: the app must finish its jobs in time through its other defences.
Such a fault is healed no earlier than those jobs are judged (the nemesis
holds it), so a slow heal of another fault cannot end it too soon.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable

from harness.errors import ConfigError


@dataclass(frozen=True)
class Target:
    """What the stack offers a kind to aim at: worker count, services, failpoints."""

    workers: int = 2
    pause_services: tuple[str, ...] = ()
    defences: tuple[str, ...] = ()
    pool_failpoint: str = ""
    kill_failpoints: tuple[str, ...] = ()
    paidapi_proxied: bool = True
    poison: tuple[tuple[str, Any], ...] = ()  # a poison_row spec's table / key / values, as sorted items


@dataclass(frozen=True)
class Kind:
    """One kind of fault: how to draw its spec, how long it lasts (seconds), whether it extends bounds."""

    name: str
    draw: Callable[[random.Random, Target], dict[str, Any]]
    lasts: tuple[float, float]
    extends_bound: bool = True
    usable: Callable[[Target], bool] = lambda target: True


IN_FLIGHT = {"in_flight": {}}  # once any job's paid call reaches the provider


def _kill(rng: random.Random, t: Target) -> dict[str, Any]:
    # a kill always lands mid-job: while the provider holds any job's call (the worker holding it
    # dies), or at one of the app's failpoints, in whichever worker reaches it first (that worker
    # kills its own process group). A kill "now" may find its worker idle: it changes nothing, is
    # judged not to have landed, and a schedule that failed with it may pass when replayed.
    moment = rng.choice(["in_flight", *t.kill_failpoints])
    if moment == "in_flight":
        return {"fault": "kill_worker", "when": IN_FLIGHT}
    return {"fault": "kill_worker", "when": {"at_failpoint": {"name": moment}}}


def _hang(rng: random.Random, t: Target) -> dict[str, Any]:
    layer = rng.choice(["provider", "network"]) if t.paidapi_proxied else "provider"
    return {"fault": "hang_endpoint", "layer": layer}


def _pool(rng: random.Random, t: Target) -> dict[str, Any]:
    return {"fault": "exhaust_pool", "at": t.pool_failpoint, "times": rng.randint(1, 3)}


def _pause(rng: random.Random, t: Target) -> dict[str, Any]:
    return {"fault": "pause_service", "service": rng.choice(t.pause_services)}


def _defence_off(rng: random.Random, t: Target) -> dict[str, Any]:
    return {"fault": "pause_service", "service": rng.choice(t.defences), "defence_off": True}


def _latency(rng: random.Random, t: Target) -> dict[str, Any]:
    return {"fault": "network_toxic", "proxy": "paidapi", "type": "latency",
            "latency": rng.choice([50, 100, 200, 500])}


def _poison(rng: random.Random, t: Target) -> dict[str, Any]:
    # the app's own poison row, unchanged: the schedule stays the same from day to day (no dates drawn)
    return {"fault": "poison_row", **dict(t.poison)}


def _broker(rng: random.Random, t: Target) -> dict[str, Any]:
    return {"fault": "broker_outage"}


def _database(rng: random.Random, t: Target) -> dict[str, Any]:
    return {"fault": "database_restart"}


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("kill", _kill, (0.5, 4.0), usable=lambda t: t.workers > 0),
    Kind("hang", _hang, (1.0, 6.0)),
    Kind("pool", _pool, (1.0, 5.0), usable=lambda t: bool(t.pool_failpoint)),
    Kind("pause", _pause, (1.0, 5.0), usable=lambda t: bool(t.pause_services)),
    Kind("defence_off", _defence_off, (10.0, 40.0), extends_bound=False, usable=lambda t: bool(t.defences)),
    Kind("latency", _latency, (1.0, 8.0), usable=lambda t: t.paidapi_proxied),
    Kind("broker", _broker, (1.0, 4.0)),
    # a row the app's sweep cannot process while it is there: one bad row must not stop the sweep.
    # It stays a while (until someone fixes it): several sweep rounds meet it, also a round that
    # waited in the queue behind the jobs
    Kind("poison", _poison, (10.0, 30.0), extends_bound=False, usable=lambda t: bool(t.poison)),
    Kind("database", _database, (0.5, 2.0)),
)}


def supported(target: Target) -> tuple[str, ...]:
    """Every kind the target can take: what a nightly draws from unless told otherwise."""
    return tuple(name for name, kind in KINDS.items() if kind.usable(target))


def kinds_named(names: list[str] | tuple[str, ...], target: Target) -> list[Kind]:
    """The kinds with these names that the target can take; ConfigError for an unknown or unusable one."""
    chosen = []
    for name in names:
        if name not in KINDS:
            raise ConfigError(f"--faults: unknown fault kind {name!r}; known: {', '.join(KINDS)}", key="faults")
        kind = KINDS[name]
        if not kind.usable(target):
            raise ConfigError(f"--faults: kind {name!r} has nothing to aim at in this app (see "
                              f"[tool.jobquake.nightly] pause_services / defences / pool_failpoint / poison)",
                              key="faults")
        chosen.append(kind)
    return chosen
