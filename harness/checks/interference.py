"""Invariant: nobody but the harness set anything on the control APIs during the run.

A mode for a job, a toxic, a deleted or moved proxy route, a changed
setting of the paid API: each decides what the app under test meets, so a
verdict reached with one the harness did not set says nothing about the app.
The harness reads both control APIs before the verdict and records every
difference from what its own clients set (``harness.interference``). Any
such difference makes the run invalid; with both APIs read and none found it
is valid; with them unread, unknown.
"""
from __future__ import annotations

from harness.checks.needs import Missing, Need, last_read
from harness.checks.result import Result, invalid_result, valid_result
from harness.checks.runner import invariant
from harness.history.snapshot import Snapshot
from harness.history import vocabulary as v
from harness.history.history import History

NAME = "no_interference"


def _read(history: History, snapshot: Snapshot | None) -> Missing | None:
    if last_read(history, v.CONTROL_STATE_SOURCE) is None:
        return Missing("the control APIs (fault proxy, paid API) were not read before the verdict")
    return None


CONTROL_STATE = Need(v.CONTROL_STATE_SOURCE, "the control APIs' state, compared with what the harness set", _read)


@invariant(NAME, needs=(CONTROL_STATE,))
def no_interference(history: History, snapshot: Snapshot | None) -> Result:
    """No proxy, toxic, mode, gate or setting of a control API that the harness did not set."""
    found = [e.data for e in history.by_source(v.CONTROL, name=v.INTERFERENCE)]
    if found:
        return invalid_result(NAME, f"{len(found)} change(s) to the control APIs that the harness did not make; "
                                    f"first, on the {found[0].get('surface')}: {found[0].get('what')}",
                              violations=found, counterexample=found)
    return valid_result(NAME, "the control APIs held only what the harness set")
