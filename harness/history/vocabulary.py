"""The sources and event names a jobquake history uses: the one place they are defined.

Every recorder, converter and checker spells sources and names through these
constants. ``type`` is Jepsen's: ``invoke`` / ``ok`` / ``fail`` / ``info``.

=========  ==========================  ==================================================
source     type  name                  data
=========  ==========================  ==================================================
submit     invoke submit               {project, file}
           ok     submit               {status, job_id}            2xx: the job was accepted
           fail   submit               {status}                    refused (4xx/5xx)
           info   submit               {error}                     the HTTP answer was lost
job        ok     state                {state, reason, attempt, log_id, txid, writer}
                                        every state change, from the DB state log trigger
           ok     deleted              {log_id, txid}              the job row was deleted
           ok     attempt_dead         {attempt, by}               sweeper / visibility / fencing
                                        declared this attempt dead
write      ok     write                {attempt, table, refused: false}  fenced write accepted
           fail   write                {attempt, table, refused: true}   the fence refused it
paidapi    invoke call                 {call_id, route, step, key, mode}   at t_start
           ok     call                 {call_id, billed, key, step, replay_of, status, ...}
                                        delivered to the client, at t_end
           info   call                 same keys; the client had gone or the outcome is
                                        unknown (``billed`` may still be true)
           fail   call                 same keys; the provider answered with an error status
failpoint  ok     <failpoint name>     {action, pid, context, hit}
fault      invoke inject / heal        {fault, params}
           ok     inject / heal        {fault, params}
worker     ok     start / ready /      {worker, pid, signal}
                  killed / exited
event      ok     status               {state, stream, event_id}   a status event the app sent
                                        to users (e.g. over SSE); ``stream``: which of the
                                        harness's stream readers got it
           ok     stream_opened        {stream, url, job_id, reconnect}  a status stream connected
           info   stream_closed        {stream, by, error, told_terminal}  it ended (by the server,
                                        or an error) or the harness stopped reading it
sweep      ok     sweep                {run_id, eligible, processed, failed,
                                        summary: {processed, failed}, state, started}
           ok     predicate            {rows, changed, query}      the rows the sweep's own
                                        predicate (config sweep_predicate) selects now, and
                                        when each last changed (epoch s) where it says
budget     ok     declared / effective {task, soft, hard}          per-task time limits (s)
           ok     limits               {chains, step_blocked, ...} the app's layered limits
                                        (``harness.limits``; read by checks/end_to_end.py)
query      ok     scan                 {table, scans, items}       table scans for a batch
           ok     work                 {table, queries, items, background}
                                        one table's statements for a batch, every table counted
harness    info   settle               {settled: false}            the run did not settle
                                        (jobs still pending) before its bound
           ok     read                 {source, records}           the harness read a source of
                                        evidence (sources: ``*_SOURCE`` below; checks/needs.py)
           ok     expect               {paid_calls, jobs}          what the scenario declared it makes
           ok/fail isolate             {left, stopped, remaining}  the test's leftovers removed
heartbeat  ok     beat                 {attempt, beat_at, beat_t, log_id, writer}
                                        the job row's heartbeat column moved (state-log
                                        trigger): the attempt holding the row beat
instrument invoke task                 {pid, task, task_id, retries, redelivered}
                                        a task run began (job and attempt as the
                                        instrumentation numbered them)
           ok     task                 {pid, task, task_id, state} it ended
           fail   job_id_from          {pid, task, task_id, expression, error}
                                        the job id was not where config says
           ok     connection_collected {pid, process, site, since, held_s, backend_pid}
                                        a pooled connection the code never gave back was
                                        returned by the garbage collector
           ok     retry                {task, task_id, retries, cause, due_in_s, max_retries,
                                        default_retry_delay, retry_backoff}  a Celery task
                                        asked to be retried (``cause``: the exception's class)
connection fail   held                 {pid, process, since, site, backend_pid}  still
                                        checked out of an app process's pool at the verdict
           fail   idle_in_transaction  {backend_pid, application, idle_s, transaction_s, locks,
                                        query}  an app session in an open transaction at the
                                        verdict, holding ``locks``
control    fail   interference         {surface, what}             a proxy, toxic, mode, gate or
                                        setting of a control API that the harness did not set
           info   refused              {surface, count}            control requests refused for
                                        want of the session's token
=========  ==========================  ==================================================

``job_id`` and ``attempt`` are top-level event fields whenever they are
known, so that a history can be indexed by job once.
"""
from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "ATTEMPT_DEAD", "BEAT", "BUDGET", "CALL", "DECLARED", "DELETED", "EFFECTIVE", "EVENT", "EXPECT", "FAILPOINT",
    "FAULT", "HARD_LIMIT", "HARNESS", "HEAL", "HEARTBEAT", "HEARTBEAT_SOURCE", "INJECT", "INSTRUMENT", "ISOLATE",
    "JOB", "LEDGER_DELIVERED_STATES", "LEDGER_FAILED_STATES", "LEDGER_HUNG", "LEDGER_SOURCE",
    "LEDGER_UNKNOWN_STATES", "LIMITS", "PAIDAPI", "QUERY", "READ", "SCAN", "SETTLE", "SNAPSHOT_SOURCE", "SOURCES",
    "STATE", "STATE_LOG_SOURCE", "STATUS", "STEP_SAVED", "STREAM", "SUBMIT", "SWEEP", "WALL_CLOCK_STEPPED",
    "WORKER", "WORKER_EXITED", "WORKER_KILLED", "WORKER_LIFECYCLE", "WORKER_LOG_SOURCE", "WORKER_READY",
    "WORKER_START", "WRITE", "WorkerLifecycle",
]

SUBMIT = "submit"
JOB = "job"
WRITE = "write"
PAIDAPI = "paidapi"
FAILPOINT = "failpoint"
FAULT = "fault"
WORKER = "worker"
EVENT = "event"
SWEEP = "sweep"
BUDGET = "budget"
QUERY = "query"
HARNESS = "harness"
INSTRUMENT = "instrument"
HEARTBEAT = "heartbeat"
CONTROL = "control"  # the control APIs (fault proxy, paid API): what someone other than the harness set
CONNECTION = "connection"

SOURCES = (SUBMIT, JOB, WRITE, PAIDAPI, FAILPOINT, FAULT, WORKER, EVENT, SWEEP, BUDGET, QUERY, HARNESS,
           INSTRUMENT, HEARTBEAT, CONTROL, CONNECTION)

# event names
STATE = "state"
DELETED = "deleted"
ATTEMPT_DEAD = "attempt_dead"
CALL = "call"
INJECT = "inject"
HEAL = "heal"
WORKER_START: Final = "start"  # Final: typed as their literal, what Record.worker() takes
WORKER_READY: Final = "ready"
WORKER_KILLED: Final = "killed"
WORKER_EXITED: Final = "exited"
STATUS = "status"
DECLARED = "declared"
EFFECTIVE = "effective"
SCAN = "scan"
SETTLE = "settle"
STEP_SAVED = "step_saved"  # source ``write``: a step's result was committed (data: step, table, call_id)
WALL_CLOCK_STEPPED = "wall_clock_stepped"  # source ``harness``: the machine's wall clock jumped (data: step_s)
HARD_LIMIT = "hard_time_limit"  # source ``worker``: a task killed at its hard time limit (data: task, limit_s)
BEAT = "beat"  # source ``heartbeat``: the job row's heartbeat column moved
STREAM = "stream"  # source ``event``: the status event stream itself (``info``: it was lost)
INTERFERENCE = "interference"  # source ``control``: a change to a control API the harness did not make
REFUSED = "refused"  # source ``control``: control requests refused for want of the session's token
COLLECTED = "connection_collected"  # source ``instrument``: the garbage collector returned a pooled connection
RETRY = "retry"  # source ``instrument``: a Celery task asked to be retried (data: cause, due_in_s, declared options)
HELD = "held"  # source ``connection``: still checked out of an app process's pool at the verdict
IDLE_IN_TRANSACTION = "idle_in_transaction"  # source ``connection``: an app session in an open transaction
STREAM_OPENED = "stream_opened"  # source ``event``: a harness stream reader connected (data: stream, url, job_id)
STREAM_CLOSED = "stream_closed"  # source ``event``: it ended (data: stream, by, error)
PREDICATE = "predicate"  # source ``sweep``: the rows the sweep's predicate selects (data: rows)
WORK = "work"  # source ``query``: one table's statements for a batch, every table counted (data: table, queries)
LIMITS = "limits"  # source ``budget``: the app's layered limits (harness.limits)
READ = "read"  # source ``harness``: a source of evidence was read (data: source, records)
EXPECT = "expect"  # source ``harness``: what the scenario declared it makes (data: paid_calls, jobs)
ISOLATE = "isolate"  # source ``harness``: what the test left was removed (harness.isolation)

# the sources of evidence a ``harness ok read`` event names (checkers tell "read, empty" from "never read")
LEDGER_SOURCE = "paidapi_ledger"
STATE_LOG_SOURCE = "state_log"
SNAPSHOT_SOURCE = "snapshot"
HEARTBEAT_SOURCE = "heartbeat_log"
WORKER_LOG_SOURCE = "worker_logs"  # records: the hard-limit kills found in the Celery workers' logs
CONTROL_STATE_SOURCE = "control_state"  # records: the control APIs read (harness.interference)
POOL_SOURCE = "pool_checkouts"  # records: the app processes whose connection pools were used during the test
SESSION_SOURCE = "db_sessions"  # records: the app processes' database sessions seen in pg_stat_activity
STREAMS_SOURCE = "status_streams"  # records: the states the status streams told (harness.streams)

# the typed words of ``harness.history.record.Record`` (and of whoever records worker lifecycle)
WorkerLifecycle = Literal["start", "ready", "killed", "exited"]
WORKER_LIFECYCLE: tuple[str, ...] = (WORKER_START, WORKER_READY, WORKER_KILLED, WORKER_EXITED)

# paid-API ledger states (see harness.history.converters)
LEDGER_DELIVERED_STATES = ("done", "replayed")
LEDGER_FAILED_STATES = ("failed",)
LEDGER_UNKNOWN_STATES = ("in_flight", "held", "hung")
LEDGER_HUNG = "hung"
