"""Which faults excuse a takeover of an attempt (for ``no_live_attempt_taken``).

Two kinds of excuse, read from the fault windows of the history
(``harness.checks.landed.windows``):

* ``hits_owner``: the fault killed, stopped or froze the process that ran
  the attempt (its pid, from the ledger's ``caller_pid``, in the fault's
  process tree), or may have (the attempt made no paid call, or the fault
  lists a worker's main pid alone). Such an attempt was dead or frozen,
  whatever its heartbeat said.
* ``cuts_off``: the fault may keep a live attempt from beating: anything
  acting on the database, the broker or other infrastructure, a failpoint,
  an emptied pool, a network fault off the paid API's path, and every
  fault this module does not know. Faults at the provider (a slow or
  failing mode, a hang, a toxic on the paid API's proxy), a poison row or
  a duplicate submission do not.
"""
from __future__ import annotations

from harness.checks.landed import PAIDAPI_PROXY, Window

PROCESS_FAULTS = ("kill_worker", "pause_service", "stop_service")
HARMLESS_FAULTS = ("paidapi_mode", "poison_row", "duplicate_submission")  # nothing of an attempt's link to its store
PAIDAPI_PATH_FAULTS = ("hang_endpoint", "network_toxic", "proxy_down")  # harmless on the paid API's path only


def _pids(window: Window) -> set[int]:
    details = window.details
    tree = details.get("tree") or ([details["pid"]] if details.get("pid") is not None else [])
    return {int(p) for p in tree}


def hits_owner(window: Window, owner_pids: set[int]) -> bool:
    """The fault killed, stopped or froze the owner's process, or may have (the evidence cannot tell)."""
    if window.fault == "failpoint":
        return window.params.get("action") == "kill"
    if window.fault not in PROCESS_FAULTS or window.details.get("role") == "infrastructure":
        return False
    pids = _pids(window)
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
