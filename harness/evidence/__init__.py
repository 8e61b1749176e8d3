"""Evidence read back from the app's database: its job table, a final snapshot of it, its state log.

The layer above ``history`` and below ``checks``: readers that speak in
their own rows, ``events.py`` that turns them into history events, and
``collect.py``, which reads every source of a finished run's evidence into
its history (not imported here).

* ``JobTable`` (``job_table.py``): the app's job table as config names it:
  ``check(dsn)``, ``snapshot(dsn)``, ``pending(dsn)``, ``state_changes(dsn)``;
  ``prepare_template(config, dsn)``: check the table and install the
  state-log trigger right after the app's schema is made.
* ``Snapshot``, ``JobRow`` (``harness.history.snapshot``, re-exported): every job
  row at the end of a run, saved as ``snapshot.json``; ``DEFAULT_TERMINAL_STATES``.
* ``StateLogConfig``, ``install_sql``, ``uninstall_sql``, ``read_state_log``,
  ``StateChange``, ``last_log_id`` (``state_log.py``): every change of a
  job's state, however short, captured by a Postgres trigger.
* ``Beat``, ``read_heartbeats`` (``heartbeats.py``): every move of the job
  table's heartbeat column, logged by the same trigger; ``JobTable.heartbeats(dsn)``.
* ``JobLogs`` (``job_logs.py``): one run's state log and heartbeat log, read
  as they grow (``read_new()``), each row once; ``LogTail`` (``log_tail.py``):
  the reader of one log, which loses no row that commits late.
* ``attempt_deaths(changes, terminal_states)``, ``AttemptDeath``
  (``derive.py``): attempts the job left behind, from the state log.
* ``WALL_CLOCK``, ``wall_to_monotonic()`` (``harness.history.clock``): the database's
  wall times placed on the monotonic clock with the offset in force when they were
  written, sampled as the run goes, so a step of the wall clock moves nothing.
* ``HardLimitKill``, ``hard_limit_kills(worker, text)``, ``tasks_received(text)``
  (``worker_logs.py``): tasks a Celery worker killed at their hard time
  limit, and the tasks it received, from its log.
"""
from __future__ import annotations

from harness.evidence.derive import AttemptDeath, attempt_deaths
from harness.evidence.heartbeats import Beat, read_heartbeats
from harness.evidence.job_table import JobTable, prepare_template
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, JobRow, Snapshot
from harness.evidence.worker_logs import HardLimitKill, hard_limit_kills, tasks_received
from harness.history.snapshot import DEFAULT_TERMINAL_STATES, JobRow, Snapshot
from harness.evidence.state_log import (
    StateChange,
    StateLogConfig,
    install_sql,
    last_log_id,
    read_state_log,
    uninstall_sql,
)

__all__ = [
    "DEFAULT_TERMINAL_STATES", "AttemptDeath", "Beat", "HardLimitKill", "JobRow", "JobTable", "Snapshot", "StateChange",
    "StateLogConfig", "attempt_deaths", "hard_limit_kills", "install_sql", "last_log_id", "prepare_template",
    "read_heartbeats", "read_state_log", "tasks_received", "uninstall_sql",
]
