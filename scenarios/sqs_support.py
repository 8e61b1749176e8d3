"""What the SQS-path scenarios need: refapp's SQS time budgets in this run's time, and slow model calls.

The budgets are read from refapp's own table (``refapp.budgets``, the one
the stack's config already names), scaled by the run's time scale with the
same floors refapp applies, so a scenario's waits follow the app when
either changes.
"""
from __future__ import annotations

import math

from harness import Run
from refapp import budgets

RECEIVE_WAIT_S = 1.0  # the consumer's long poll (refapp.consumer.RECEIVE_WAIT): a visible message waits at most this
DEFAULT_MODEL_DEADLINE_S = 120.0  # the budget table's model_call, when the stack sets no REFAPP_MODEL_DEADLINE_S


def budget(jq: Run, name: str) -> float:
    """refapp's budget ``name`` in seconds at this run's time scale (with its floor)."""
    return budgets.scaled(name, jq.config.time_scale)


def attempt_cap(jq: Run) -> float:
    """How long an SQS attempt may run before the consumer declares it dead and releases its message."""
    return budget(jq, "sqs_attempt_cap")


def visibility_window(jq: Run) -> float:
    """The SQS visibility window the heartbeat renews (whole seconds, at least 1)."""
    return max(1.0, round(budget(jq, "sqs_visibility")))


def redelivery_bound(jq: Run) -> float:
    """How long a released message may take to reach a consumer again: the retry backoff plus a long poll."""
    return round(budget(jq, "sqs_retry_backoff")) + RECEIVE_WAIT_S


def model_deadline(jq: Run) -> float:
    """The per-call deadline the stack configures for refapp (``REFAPP_MODEL_DEADLINE_S``), scaled."""
    configured = jq.config.env.get("REFAPP_MODEL_DEADLINE_S")
    return jq.scaled(float(configured) if configured else DEFAULT_MODEL_DEADLINE_S)


def slow_model_calls(jq: Run, share_of_deadline: float = 0.8) -> float:
    """Make every paid call take ``share_of_deadline`` of the model deadline: slow, never timed out.

    Returns a call's duration in this run's seconds.
    """
    call = share_of_deadline * model_deadline(jq)
    jq.faults.paidapi_mode("slow", seconds=call / jq.config.time_scale)  # the provider scales it back
    return call


def calls_to_outlast(window: float, call: float) -> int:
    """How many back-to-back calls of ``call`` seconds it takes to pass ``window``."""
    return math.ceil(window / call)
