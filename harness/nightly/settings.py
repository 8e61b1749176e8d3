"""``[tool.jobquake.nightly]``: how a nightly run reaches the app, and its defaults.

    [tool.jobquake.nightly]
    submit = "scenarios.nightly_workload:submit"   # submit(values, job) -> job id | None
    job_bound = 20            # seconds a job may take once no delaying fault is active
    recovery = "refapp.budgets:nightly_recovery"   # recovery(time_scale) -> seconds the app's own
                              # defences need to bring back a job a fault lost; added to job_bound
    rate = 5                  # jobs per second
    concurrency = 4           # submissions in flight at once
    faults = ["kill", "hang", "pool"]   # default: every kind the app can take (see kinds.supported)
    replicas = ["relay", "sweeper"]     # app processes a schedule may run two of (drawn from the seed)
    pause_services = ["relay", "consumer", "worker1"]   # what "pause" may stop for a while
    defences = ["sweeper"]    # what "defence_off" may stop (another defence must cover for it)
    pool_failpoint = "submit.after_job_write"            # where "pool" empties the app's pool
    kill_failpoints = ["task.before_paid_call"]          # where "kill" may catch a worker mid-job
    # the sweep workload, run when the schedule draws "poison" faults:
    sweep = "scenarios.nightly_sweep:trigger"          # trigger(run, round): add rows, start a sweep
    sweep_record = "scenarios.nightly_sweep:record"    # record(run): a `sweep` event per sweep run
    sweep_every = 5                                    # seconds between sweep rounds
    poison = {table = "invoices", key = ["customer"], values = {customer = "poison", amount = "-5"}}

Unknown keys are errors naming the key and the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from harness.config import Config, load_callable
from harness.errors import ConfigError
from harness.nightly.kinds import Target, supported
from harness.nightly.sweeps import SweepHooks
from harness.nightly.workload import SubmitFn

KEYS = ("submit", "job_bound", "recovery", "rate", "concurrency", "faults", "pause_services", "defences",
        "pool_failpoint", "kill_failpoints", "sweep", "sweep_record", "sweep_every", "poison", "replicas")


@dataclass(frozen=True)
class NightlySettings:
    """The nightly table, checked."""

    submit: str = ""
    job_bound: float = 30.0
    recovery: str = ""
    rate: float = 5.0
    concurrency: int = 4
    faults: tuple[str, ...] = ()  # () : every kind the app can take
    pause_services: tuple[str, ...] = ()
    defences: tuple[str, ...] = ()
    pool_failpoint: str = ""
    kill_failpoints: tuple[str, ...] = ()
    sweep: str = ""
    sweep_record: str = ""
    sweep_every: float = 5.0
    poison: tuple[tuple[str, Any], ...] = ()
    replicas: tuple[str, ...] = ()  # app processes whose replicas a schedule draws (one or two)

    @classmethod
    def from_config(cls, config: Config) -> "NightlySettings":
        table: Mapping[str, Any] = config.values.get("nightly") or {}
        unknown = sorted(set(table) - set(KEYS))
        if unknown:
            raise ConfigError(f"[tool.jobquake.nightly]: unknown keys {unknown}; known: {', '.join(KEYS)}",
                              key="nightly")
        try:
            return cls(submit=str(table.get("submit", "")),
                       job_bound=float(table.get("job_bound", cls.job_bound)),
                       recovery=str(table.get("recovery", "")),
                       rate=float(table.get("rate", cls.rate)),
                       concurrency=int(table.get("concurrency", cls.concurrency)),
                       faults=_names(table.get("faults", ())),
                       pause_services=_names(table.get("pause_services", ())),
                       defences=_names(table.get("defences", ())),
                       pool_failpoint=str(table.get("pool_failpoint", "")),
                       kill_failpoints=_names(table.get("kill_failpoints", ())),
                       sweep=str(table.get("sweep", "")), sweep_record=str(table.get("sweep_record", "")),
                       sweep_every=float(table.get("sweep_every", cls.sweep_every)),
                       poison=_poison(table.get("poison")), replicas=_names(table.get("replicas", ())))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[tool.jobquake.nightly]: {exc}", key="nightly") from exc

    def submit_fn(self, config: Config) -> SubmitFn:
        if not self.submit:
            raise ConfigError("[tool.jobquake.nightly] submit is not set: name the 'module:callable' that "
                              "submits one job, called as submit(values, job) -> job id | None",
                              key="nightly.submit")
        return load_callable(self.submit, "nightly.submit", config.root)

    def bound(self, config: Config) -> float:
        """The job bound at this run's time scale: ``job_bound`` plus the app's own recovery time.

        A job a fault lost comes back through the app's defences (a sweeper
        that re-sends a job queued too long, a broker that redelivers after
        its visibility window); the app names how long that takes at a time
        scale, so the bound is computed from the app's timings, not guessed.
        """
        if not self.recovery:
            return self.job_bound
        recovery = load_callable(self.recovery, "nightly.recovery", config.root)(config.time_scale)
        try:
            seconds = float(recovery)
        except (TypeError, ValueError):
            seconds = -1.0
        if not seconds >= 0:
            raise ConfigError(f"[tool.jobquake.nightly] recovery {self.recovery!r} returned {recovery!r}; "
                              f"expected seconds >= 0", key="nightly.recovery")
        return round(self.job_bound + seconds, 2)

    def kinds(self, config: Config) -> tuple[str, ...]:
        """The fault kinds a schedule draws: ``faults`` as configured, else every kind the app can take."""
        return self.faults or supported(self.target(config))

    def target(self, config: Config) -> Target:
        return Target(workers=int(config.workers) if config.worker_command else 0,
                      pause_services=self.pause_services, defences=self.defences,
                      pool_failpoint=self.pool_failpoint, kill_failpoints=self.kill_failpoints,
                      paidapi_proxied="paidapi" in config.proxied, poison=self.poison)

    def sweep_hooks(self, config: Config) -> "SweepHooks | None":
        """The sweep workload's two callables, or None when the app declares none."""
        if not self.sweep and not self.sweep_record:
            return None
        if not (self.sweep and self.sweep_record):
            raise ConfigError("[tool.jobquake.nightly]: give both sweep (trigger(run, round)) and "
                              "sweep_record (record(run)), or neither", key="nightly.sweep")
        return SweepHooks(trigger=load_callable(self.sweep, "nightly.sweep", config.root),
                          record=load_callable(self.sweep_record, "nightly.sweep_record", config.root),
                          every=self.sweep_every)


def _poison(value: Any) -> tuple[tuple[str, Any], ...]:
    """The poison row as sorted (key, value) items of a poison_row spec: table, values, optional key."""
    if value is None:
        return ()
    if not isinstance(value, dict) or not isinstance(value.get("table"), str) \
            or not isinstance(value.get("values"), dict) or set(value) - {"table", "values", "key"}:
        raise ValueError(f"poison: expected {{table = ..., values = {{column = value}}, key = [...]}}, got {value!r}")
    return tuple(sorted((k, v) for k, v in value.items()))


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"expected a list of names, got {value!r}")
