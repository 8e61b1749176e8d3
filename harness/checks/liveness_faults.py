"""Which faults excuse a takeover of an attempt (for ``no_live_attempt_taken``).

Two kinds of excuse, read from the fault windows of the history
(``harness.checks.landed.windows``):

* ``hits_owner``: the fault killed, stopped or froze the process that ran
  the attempt (its pid, from the ledger's ``caller_pid``, in the fault's
  process tree), or may have (the attempt made no paid call, or the fault
  lists a worker's main pid alone). Such an attempt was dead or frozen,
  whatever its heartbeat said. A failpoint that kills the process reaching
  it killed the processes that fired it (``fired``: their pids, from the
  failpoint's triggers), not an attempt elsewhere (a relay killed between
  its send and its mark excuses no worker's attempt).
* ``cuts_off``: the fault may keep a live attempt from beating: anything
  acting on the database, the broker or other infrastructure, a failpoint,
  an emptied pool, a network fault off the paid API's path, and every
  fault this module does not know. Faults at the provider (a slow or
  failing mode, a hang, a toxic on the paid API's proxy), a poison row or
  a duplicate submission do not.
"""
from __future__ import annotations

from harness.checks.job_events import fault_pids
from harness.checks.landed import PAIDAPI_PROXY, Window
from harness.history import vocabulary as v
from harness.history.history import History

PROCESS_FAULTS = ("kill_worker", "pause_service", "stop_service")
HARMLESS_FAULTS = ("paidapi_mode", "poison_row", "duplicate_submission")  # nothing of an attempt's link to its store
PAIDAPI_PATH_FAULTS = ("hang_endpoint", "network_toxic", "proxy_down")  # harmless on the paid API's path only


def fired_pids(history: History, window: Window) -> set[int] | None:
    """The processes that fired a killing failpoint while it was armed (None: not one, or its kill takes a
    whole process group, which may hold the owner whoever fired it)."""
    if window.fault != "failpoint" or window.params.get("action") != "kill" or window.params.get("group"):
        return None
    end = float("inf") if window.healed_at is None else window.healed_at
    return {int(e.data["pid"]) for e in history.by_source(v.FAILPOINT, name=str(window.params.get("at")))
            if e.data.get("pid") is not None and window.invoked_at <= e.t <= end}


def hits_owner(window: Window, owner_pids: set[int], fired: set[int] | None = None) -> bool:
    """The fault killed, stopped or froze the owner's process, or may have (the evidence cannot tell).

    ``fired``: for a killing failpoint, the pids that fired it (``fired_pids``)."""
    if window.fault == "failpoint":
        if window.params.get("action") != "kill":
            return False
        return fired is None or not owner_pids or bool(fired & owner_pids)
    if window.fault not in PROCESS_FAULTS or window.details.get("role") == "infrastructure":
        return False
    pids = fault_pids(window.details)
    if not owner_pids or not pids:
        return True
    if window.fault != "kill_worker" and window.details.get("role") == "worker" and not window.details.get("tree"):
        return True  # a worker's main pid alone: its pool's children are not listed
    return bool(owner_pids & pids)


def cuts_off(window: Window) -> bool:
    """The fault may keep a live attempt from beating (rule 2's excuse)."""
    if window.fault in HARMLESS_FAULTS:
        return False
    if window.fault in PAIDAPI_PATH_FAULTS:
        return not (window.params.get("layer") == "provider" or window.params.get("proxy") == PAIDAPI_PROXY)
    if window.fault in PROCESS_FAULTS:
        return window.details.get("role") == "infrastructure"
    return True  # database faults, failpoints, an emptied pool, the broker, and faults we do not know


def _span(window: Window) -> tuple[float, float]:
    start = window.invoked_at if window.injected_at is None else min(window.invoked_at, window.injected_at)
    end = float("inf") if window.healed_at is None else window.healed_at
    if window.fault == "kill_worker":
        end = float("inf")  # the heal starts a fresh worker; the killed process stays dead
    return start, end


def in_force(window: Window, start: float, end: float) -> bool:
    if window.failure is not None:
        return False
    w_start, w_end = _span(window)
    return w_start <= end and w_end >= start
