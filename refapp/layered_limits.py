"""Which limit sits inside which, as refapp's processes enforce them: its answer to the harness's ``limits``.

Computed by refapp's own code (the model client's deadline, the worker's
command line, the SQS queues' max receives) from the budget table; it sits
above all of them, where the table (``budgets``) sits below.
"""
from __future__ import annotations

import os
from dataclasses import replace

from refapp import model_client, settings, sqs_queues
from refapp.budgets import scaled, task_limits
from refapp.worker import worker_argv


# Statements per item of a batch, per table, that refapp's own work takes (measured on a 40-item batch,
# about half of each): a table not named here is read per item only through a cache, if at all.
QUERIES_PER_ITEM: dict[str, float] = {
    "*": 0.5,
    "jobs": 10,  # each item's fence (before paying, before saving) and its progress counters
    "items": 5,  # each item's outcome, and the counters' count of done and failed items
    "step_results": 4,  # "already done?" before paying, the save, and its read back
    "ledger_entries": 1.5,  # one booking per CSV row
    "outbox": 1,  # one message per job, whatever its size
    "reference_versions": 1,  # the category cache's version, looked at most once per reference_recheck
}


def _flag(argv: list[str], name: str) -> float | None:
    """The value of a ``--name value`` flag in a command line, None when absent."""
    return float(argv[argv.index(name) + 1]) if name in argv else None


def _effective_task_limits(task: str, config: object) -> tuple[float | None, float | None]:
    """The soft and hard limit a worker enforces for ``task``: its decorator's, else the worker command's."""
    own = task_limits(task)
    argv = worker_argv(config, [])
    soft = own.get("soft_time_limit", _flag(argv, "--soft-time-limit"))
    hard = own.get("time_limit", _flag(argv, "--time-limit"))
    return soft, hard


def layered_limits(time_scale: float | None = None, env: dict[str, str] | None = None) -> dict[str, object]:
    """Which limit sits inside which, as refapp's processes with ``env`` would enforce them.

    For the harness's nesting audit (config ``limits``): each chain innermost
    first, every value in scaled seconds (or a count), computed by refapp's
    own code under the settings ``env`` gives (a mutant switched on there is
    seen); ``step_blocked`` bounds one paid step's time blocked on the
    provider: one per-call deadline per attempt the code allows;
    ``attempt_blocked`` the same within one attempt: one deadline;
    ``heartbeat_stale`` the age past which a heartbeat means a dead attempt
    (the claim's and the sweeper's rule); ``writes_name_attempt``: every
    state write of an attempt names it (``Attempt.writes_as``), so a write
    that names none is the sweeper's, a claim's or the API's; ``retries``:
    an attempt that gave its job back (the SQS path) is followed by the next
    one no sooner than ``sqs_retry_backoff``, and a job is given up after
    ``max_attempts`` attempts; ``queries_per_item`` the statements per item
    of a batch each table may take (``QUERIES_PER_ITEM``).
    """
    config = settings.load(os.environ if env is None else env)
    if time_scale is not None:
        config = replace(config, time_scale=time_scale)
    with settings.using(config):
        call = model_client.call_timeout()
        soft, hard = _effective_task_limits("refapp.process_job", config)
        sweep_soft, sweep_hard = _effective_task_limits("refapp.sweep_overdue", config)
        visibility = scaled("broker_visibility")
        chains = {
            "celery batch": [["model_call", call], ["task_soft", soft], ["task_hard", hard],
                             ["broker_visibility", visibility]],
            "celery sweep": [["task_soft", sweep_soft], ["task_hard", sweep_hard], ["broker_visibility", visibility]],
            # the table's own per-call deadline, which applies wherever the setting is left unset
            "celery batch, table defaults": [["model_call", scaled("model_call")], ["task_soft", soft]],
            "sqs attempt": [["model_call", call], ["sqs_attempt_cap", scaled("sqs_attempt_cap")]],
            "db wait": [["db_pool_wait", scaled("db_pool_wait")], ["task_soft", soft]],
            "liveness": [["heartbeat_interval", scaled("heartbeat_interval")],
                         ["heartbeat_stale", scaled("heartbeat_stale")]],
            "sqs receives": [["code_attempts", config.max_attempts],
                             ["queue_max_receives", sqs_queues.max_receives()]],
        }
        deadline = model_client.model_deadline()  # one call per step and attempt, each within it
        return {"chains": chains, "step_blocked": deadline * config.max_attempts, "attempt_blocked": deadline,
                "heartbeat_stale": scaled("heartbeat_stale"), "writes_name_attempt": True,
                "retries": {"backoff": float(round(scaled("sqs_retry_backoff"))), "max_attempts": config.max_attempts},
                "queries_per_item": dict(QUERIES_PER_ITEM)}
