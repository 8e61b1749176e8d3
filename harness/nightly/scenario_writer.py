"""A schedule as a ready-to-paste pytest scenario file."""
from __future__ import annotations

import json
import re

from harness.nightly.runner import SWEEP_OPTIONS
from harness.nightly.schedule import Schedule

TEMPLATE = '''"""{title}

Found by `jobquake nightly` (seed {seed}){shrunk}.
Invariant that failed: {invariant}
  {message}

Each fault is a registry spec (`harness.faults.from_spec`): injected `at`
seconds into the run, healed `lasts` seconds later; a kill says its `when`.
A fault that switches a defence off stays off past `lasts` until the jobs
the other faults exposed are judged, and the job bound is the app's own
([tool.jobquake.nightly] job_bound plus its recovery, at the run's time
scale): neither depends on how fast this machine is today.
"""
import pytest

from harness.nightly.checks import no_job_stuck
from harness.nightly.scenario import play

# the workload: jobs submitted at RATE per second for DURATION seconds, their content from SEED
SEED, DURATION, RATE, CONCURRENCY = {seed}, {duration!r}, {rate!r}, {concurrency}

FAULTS = [
{faults}
]


@pytest.mark.jobquake({marker})  # play() settles within the job bound
def {name}(jq):
    play(jq, seed=SEED, duration=DURATION, rate=RATE, concurrency=CONCURRENCY, faults=FAULTS{sweep})
'''


def _literal(value: object) -> str:
    """A Python literal for JSON-like data (true/false/null spelled the Python way)."""
    text = json.dumps(value, sort_keys=True)
    return re.sub(r"\b(true|false|null)\b", lambda m: {"true": "True", "false": "False", "null": "None"}[m.group()],
                  text)


def scenario_source(schedule: Schedule, *, invariant: str, message: str, reruns: int | None = None) -> str:
    """The text of a pytest file that plays ``schedule`` and judges it."""
    faults = "\n".join(f"    dict(at={f.at!r}, lasts={f.lasts!r}, kind={f.kind!r}, extends_bound={f.extends_bound!r},\n"
                       f"         fault={_literal(f.spec)}),"
                       for f in schedule.faults)
    shrunk = f", shrunk to this in {reruns} reruns" if reruns is not None else ""
    return TEMPLATE.format(
        title=f"A nightly failure of {invariant}, as a scenario: {len(schedule.faults)} fault(s).",
        seed=schedule.seed, shrunk=shrunk, invariant=invariant, message=message.replace('"""', "'''")[:300],
        duration=schedule.duration, rate=schedule.rate, concurrency=schedule.concurrency, faults=faults, name=f"test_nightly_seed_{schedule.seed}_minimal",
        marker=_marker(schedule), sweep=f", sweep_every={schedule.sweep_every!r}" if schedule.sweep_every else "")


def _marker(schedule: Schedule) -> str:
    """The scenario's checks (the nightly's own, and the sweep's when the schedule runs a sweep) and the
    replicas the schedule drew."""
    replicas = f", replicas={_literal(schedule.replicas)}" if schedule.replicas else ""
    if not schedule.sweep_every:
        return f"checks=[no_job_stuck], settle=False{replicas}"
    return (f'checks=[no_job_stuck, "sweep_complete"], settle=False{replicas},\n'
            f'                      options={_literal(SWEEP_OPTIONS)}')
