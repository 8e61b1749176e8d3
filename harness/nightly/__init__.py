"""Nightly resilience runs: a stream of jobs under a seeded random fault schedule.

    jobquake nightly --duration 30m --seed 7 --faults kill,hang,pool
    jobquake nightly --replay .jobquake/nightly/seed-7

``schedule`` draws the plan from the seed, ``workload`` submits the jobs,
``nemesis`` injects and heals the faults (registry faults, built from their
specs), ``monitor`` checks continuously, ``runner`` judges the run,
``shrink`` reduces a failing schedule and ``scenario_writer`` prints it as
a pytest scenario; ``report`` and ``shards`` write and merge the reports.
"""
from harness.nightly.schedule import Planned, Schedule, draw

__all__ = ["Planned", "Schedule", "draw"]
