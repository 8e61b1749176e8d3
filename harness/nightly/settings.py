"""``[tool.jobquake.nightly]``: how a nightly run reaches the app, and its defaults.

    [tool.jobquake.nightly]
    submit = "scenarios.nightly_workload:submit"   # submit(values, job) -> job id | None
    job_bound = 20            # seconds a job may take once no delaying fault is active
    rate = 5                  # jobs per second
    concurrency = 4           # submissions in flight at once
    faults = ["kill", "hang", "pool", "pause", "defence_off", "latency"]
    pause_services = ["relay", "consumer", "worker1"]   # what "pause" may stop for a while
    defences = ["sweeper"]    # what "defence_off" may stop (another defence must cover for it)
    pool_failpoint = "submit.after_job_write"            # where "pool" empties the app's pool
    kill_failpoints = ["task.before_paid_call"]          # where "kill" may catch a worker mid-job

Unknown keys are errors naming the key and the known ones.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from harness.config import Config, load_callable
from harness.errors import ConfigError
from harness.nightly.kinds import DEFAULT_KINDS, Target
from harness.nightly.workload import SubmitFn

KEYS = ("submit", "job_bound", "rate", "concurrency", "faults", "pause_services", "defences", "pool_failpoint",
        "kill_failpoints")


@dataclass(frozen=True)
class NightlySettings:
    """The nightly table, checked."""

    submit: str = ""
    job_bound: float = 30.0
    rate: float = 5.0
    concurrency: int = 4
    faults: tuple[str, ...] = DEFAULT_KINDS
    pause_services: tuple[str, ...] = ()
    defences: tuple[str, ...] = ()
    pool_failpoint: str = ""
    kill_failpoints: tuple[str, ...] = ()

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
                       rate=float(table.get("rate", cls.rate)),
                       concurrency=int(table.get("concurrency", cls.concurrency)),
                       faults=_names(table.get("faults", DEFAULT_KINDS)),
                       pause_services=_names(table.get("pause_services", ())),
                       defences=_names(table.get("defences", ())),
                       pool_failpoint=str(table.get("pool_failpoint", "")),
                       kill_failpoints=_names(table.get("kill_failpoints", ())))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"[tool.jobquake.nightly]: {exc}", key="nightly") from exc

    def submit_fn(self, config: Config) -> SubmitFn:
        if not self.submit:
            raise ConfigError("[tool.jobquake.nightly] submit is not set: name the 'module:callable' that "
                              "submits one job, called as submit(values, job) -> job id | None",
                              key="nightly.submit")
        return load_callable(self.submit, "nightly.submit", config.root)

    def target(self, config: Config) -> Target:
        return Target(workers=int(config.workers) if config.worker_command else 0,
                      pause_services=self.pause_services, defences=self.defences,
                      pool_failpoint=self.pool_failpoint, kill_failpoints=self.kill_failpoints,
                      paidapi_proxied="paidapi" in config.proxied)


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"expected a list of names, got {value!r}")
