"""Play a nightly schedule inside a pytest scenario (what a shrunk schedule is printed as).

    @pytest.mark.jobquake(checks=[no_job_stuck], settle=False)
    def test_minimal(jq):
        play(jq, seed=7, duration=20, rate=5, concurrency=4, faults=FAULTS)

The plugin then heals, collects and judges as for any scenario, with the
nightly's own ``no_job_stuck`` asked for by the marker. The job bound is
the app's own (``[tool.jobquake.nightly]`` ``job_bound`` plus its
``recovery`` at the run's time scale) unless ``job_bound`` is given.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from harness.nightly.runner import Driven, drive
from harness.nightly.schedule import Planned, Schedule
from harness.nightly.settings import NightlySettings


def planned(entry: Mapping[str, Any]) -> Planned:
    """A ``Planned`` from ``dict(at=..., lasts=..., fault={...}, extends_bound=...)``."""
    spec = dict(entry["fault"])
    return Planned(at=float(entry["at"]), lasts=float(entry["lasts"]), kind=str(entry.get("kind", spec["fault"])),
                   spec=spec, extends_bound=bool(entry.get("extends_bound", True)))


def play(jq: Any, *, seed: int, duration: float, rate: float, concurrency: int,
         faults: Iterable[Mapping[str, Any]], job_bound: float | None = None, sweep_every: float = 0.0) -> Driven:
    """Submit the workload and play ``faults`` on the scenario's run; returns once the app settled.

    ``sweep_every``: also run the app's sweep every so many seconds (a schedule with poison rows).
    """
    nightly = NightlySettings.from_config(jq.config)
    if job_bound is None:
        job_bound = nightly.bound(jq.config)
    schedule = Schedule(seed=seed, duration=float(duration), rate=float(rate), concurrency=int(concurrency),
                        job_bound=float(job_bound), faults=tuple(planned(f) for f in faults),
                        sweep_every=float(sweep_every))
    (jq.artifacts / "schedule.json").write_text(schedule.to_json())
    sweep = nightly.sweep_hooks(jq.config) if sweep_every else None
    return drive(jq, schedule, nightly.submit_fn(jq.config), sweep=sweep)
