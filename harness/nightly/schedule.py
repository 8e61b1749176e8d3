"""A nightly run's plan: the workload and the faults, drawn from one seed, stored as JSON.

    schedule = draw(seed=7, duration=600, kinds=["kill", "hang"], target=target)
    path.write_text(schedule.to_json())      # before the run starts
    Schedule.from_json(path.read_text())     # a replay runs exactly this

The same arguments give the same schedule byte for byte: the RNG is seeded
from the seed alone, times are rounded, and the JSON is written with sorted
keys. A schedule is also what shrinking edits: fewer faults, a shorter run,
fewer jobs, shorter faults.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from harness.nightly.kinds import KINDS, Target, kinds_named

FORMAT = 1
MEAN_GAP_S = 15.0  # one fault every 15 s on average: some overlap, and the app gets quiet stretches
QUIET_TAIL = 0.2  # the last fifth of the run injects nothing: the app has time to recover


@dataclass(frozen=True)
class Planned:
    """One fault of the schedule: inject at ``at`` seconds, heal ``lasts`` seconds later."""

    at: float
    lasts: float
    kind: str
    spec: dict[str, Any]
    extends_bound: bool = True

    @property
    def heal_at(self) -> float:
        return round(self.at + self.lasts, 2)

    def label(self) -> str:
        """A short name for reports: the kind and its main parameter."""
        extra = {k: v for k, v in self.spec.items() if k in ("index", "service", "layer", "latency", "times")}
        return self.kind + ("(" + ", ".join(f"{k}={v}" for k, v in extra.items()) + ")" if extra else "")


@dataclass(frozen=True)
class Schedule:
    """The workload (rate, concurrency, duration) and the planned faults, all from ``seed``."""

    seed: int
    duration: float
    rate: float
    concurrency: int
    job_bound: float
    faults: tuple[Planned, ...] = ()
    max_jobs: int | None = None
    shard: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    sweep_every: float = 0.0  # seconds between rounds of the app's sweep; 0: no sweep workload
    replicas: dict[str, int] = field(default_factory=dict)  # app process -> how many run (drawn)

    @property
    def jobs(self) -> int:
        """How many jobs the workload submits (the rate over the duration, or ``max_jobs``)."""
        planned = int(self.rate * self.duration)
        return planned if self.max_jobs is None else min(planned, self.max_jobs)

    def with_faults(self, faults: list[Planned] | tuple[Planned, ...]) -> "Schedule":
        return replace(self, faults=tuple(faults))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["format"] = FORMAT
        data["faults"] = [asdict(f) for f in self.faults]
        if not self.sweep_every:  # a schedule without a sweep reads as it did before there was one
            del data["sweep_every"]
        if not self.replicas:  # nor one that runs one of everything
            del data["replicas"]
        return data

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, one fault per block, a final newline."""
        return json.dumps(self.to_dict(), sort_keys=True, indent=1) + "\n"

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "Schedule":
        data = {k: v for k, v in raw.items() if k != "format"}
        data["faults"] = tuple(Planned(**f) for f in data.get("faults", ()))
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> "Schedule":
        return cls.from_dict(json.loads(text))


def shard_seed(seed: int, index: int, count: int) -> int:
    """The seed of shard ``index`` of ``count``: derived from the run seed, different per shard."""
    if count <= 1:
        return seed
    digest = hashlib.sha256(f"{seed}:shard:{index}/{count}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def draw(*, seed: int, duration: float, kinds: list[str] | tuple[str, ...], target: Target,
         rate: float = 5.0, concurrency: int = 4, job_bound: float = 20.0,
         mean_gap: float = MEAN_GAP_S, shard: str | None = None, sweep_every: float = 5.0,
         replicas_of: tuple[str, ...] = ()) -> Schedule:
    """Draw a schedule: fault times from a Poisson process, kinds and parameters from the seed.

    A schedule that may draw poison rows runs the app's sweep every ``sweep_every`` seconds.
    Each app process in ``replicas_of`` runs as one or two replicas, drawn from the seed on a
    stream of its own (the faults of a seed stay what they were).
    """
    rng = random.Random(f"jobquake-nightly:{seed}")
    chosen = kinds_named(list(kinds), target)
    faults: list[Planned] = []
    last_start = duration * (1 - QUIET_TAIL)
    t = rng.expovariate(1 / mean_gap) if chosen else last_start
    while t < last_start:
        kind = rng.choice(chosen)
        low, high = kind.lasts
        lasts = min(rng.uniform(low, high), duration - t)
        planned = Planned(at=round(t, 2), lasts=round(lasts, 2), kind=kind.name,
                          spec=kind.draw(rng, target), extends_bound=kind.extends_bound)
        # the same fault on the same target twice at once would heal the first one early
        if not any(f.spec == planned.spec and f.heal_at > planned.at for f in faults):
            faults.append(planned)
        t += rng.expovariate(1 / mean_gap)
    return Schedule(seed=seed, duration=float(duration), rate=float(rate), concurrency=int(concurrency),
                    job_bound=float(job_bound), faults=tuple(faults), shard=shard,
                    meta={"kinds": [k.name for k in chosen], "mean_gap": mean_gap},
                    sweep_every=float(sweep_every) if any(k.name == "poison" for k in chosen) else 0.0,
                    replicas=draw_replicas(seed, replicas_of))


def draw_replicas(seed: int, processes: tuple[str, ...]) -> dict[str, int]:
    """One or two replicas of each process, from the seed (its own RNG: the faults' draws are unchanged)."""
    rng = random.Random(f"jobquake-nightly:{seed}:replicas")
    return {name: rng.choice((1, 2)) for name in processes}


def known_kind(name: str) -> bool:
    return name in KINDS
