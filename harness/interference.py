"""Read the control APIs at the verdict: anything set there that the harness did not set is interference.

The fault proxy and the paid API decide what a scenario's app meets: one mode
for a job, one toxic, one deleted route is enough to turn a failing run
green. Their control requests need the session's token, so another local
user's are refused; what still gets through (a leaked token, a real
Toxiproxy, which takes no token) shows as a difference between what the
harness's own clients set and what the servers hold when the verdict is
taken. Each difference is recorded as ``control fail interference``, which
``no_interference`` judges invalid; the refusals are recorded as
``control info refused``, shown on the timeline without changing the
verdict. The read itself is recorded (``harness ok read control_state``),
so a run whose control APIs could not be read is ``unknown`` there, never
``valid``.
"""
from __future__ import annotations

from typing import Any, Callable

from harness.errors import HarnessError
from harness.history import vocabulary as v


def record_interference(run: Any) -> None:
    """Compare each control API with what the harness set on it, into ``run``'s history (a
    ``harness.run.Run``: this sits below it, with the sources of evidence that read it)."""
    surfaces: dict[str, tuple[Callable[[], list[str]], Callable[[], int | None], Any]] = {
        "proxy": (run.proxy.interference, run.proxy.refused, run.stack.proxy),
        "paidapi": (run.paidapi.interference, lambda: run.paidapi.stats().get("refused"), run.stack.paidapi),
    }
    checked = 0
    for surface, (differences, refused, service) in surfaces.items():
        try:
            found, count = differences(), refused()
        except HarnessError as exc:  # not read: the checker says unknown for want of this evidence
            run.history.record(v.CONTROL, "info", "unread", data={"surface": surface, "error": str(exc)})
            return
        for what in found:
            run.history.record(v.CONTROL, "fail", v.INTERFERENCE, data={"surface": surface, "what": what})
        new = (count or 0) - getattr(service, "_refused_seen", 0)
        if count is not None:
            service._refused_seen = count
        if new > 0:
            run.history.record(v.CONTROL, "info", v.REFUSED, data={"surface": surface, "count": new})
        checked += 1
    run.history.record(v.HARNESS, "ok", v.READ, data={"source": v.CONTROL_STATE_SOURCE, "records": checked})
