"""Poll a condition with a deadline: the only way jobquake waits."""
from __future__ import annotations

import time
from typing import Callable, Literal, TypeVar

from harness.errors import WaitTimeout

T = TypeVar("T")

DEFAULT_INTERVAL = 0.01  # seconds; short enough to catch a state that lasts a few ms
# the slowest look at a state that stays once reached (a terminal job state): a look at a job
# costs its app a few ms of CPU, so a wait at 10 ms burns a fifth of a core while the job runs
LASTING_STATE_INTERVAL = 0.1
BACKOFF = 1.5  # a lasting wait's pauses: each this much longer than the last


def wait_until(
    predicate: Callable[[], T | None | Literal[False]],  # None / False: not yet; the wait returns T
    *,
    timeout: float,
    interval: float = DEFAULT_INTERVAL,
    lasting: bool = False,
    what: str = "condition",
    abort_on: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``predicate`` until it returns a truthy value; return that value.

    Exceptions raised by the predicate count as "not yet" (a server that is
    still starting refuses connections); the last one is chained to the
    timeout so the reader sees why the condition never held. Exceptions of a
    type in ``abort_on`` mean "never": they propagate at once.

    ``lasting``: the condition stays true once it holds (a job in a terminal
    state), so the polls back off, each pause ``BACKOFF`` times the last, up
    to ``LASTING_STATE_INTERVAL``: a later look costs latency, never a missed
    state.
    """
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = predicate()
        except abort_on:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure means "not ready yet"
            last_error = exc
            value = None
        if value:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"{what} did not hold within {timeout:.2f}s", seen=value) from last_error
        time.sleep(min(interval, max(deadline - time.monotonic(), 0.0)))
        if lasting:
            interval = min(interval * BACKOFF, max(LASTING_STATE_INTERVAL, interval))
