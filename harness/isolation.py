"""Keep tests apart: after a verdict, nothing of the test may reach the next one.

``isolate(run)`` runs once the verdict is in. Work still pending then (the
settle timed out, or the scenario did not settle) may sit in a process's
memory, beyond any purge: a Celery worker holds reserved and scheduled
(ETA / countdown) tasks, an SQS consumer holds the message it is working
on, a relay the outbox row it is sending. So every app process and worker
is killed first when anything is still pending; the next test's reset
starts them again, after its database is fresh. Then the broker's queues
and unacknowledged messages are deleted and every SQS queue is emptied
(in-flight, delayed and dead letters included), and both are read again:
anything still there is an ``IsolationError`` on this test, naming it.
"""
from __future__ import annotations

from typing import Any

from harness.errors import HarnessError
from harness.history import vocabulary as v
from harness.pending.broker import purge_redis_broker, read_redis_broker
from harness.pending.item import PendingWork, blocking, describe_all
from harness.pending.sqs import purge_sqs, read_sqs


class IsolationError(HarnessError):
    """Work of a test was still in the broker or SQS after it was removed; ``remaining`` lists it."""

    def __init__(self, nodeid: str, remaining: list[PendingWork]):
        super().__init__(f"{nodeid}: work of this test could not be removed before the next test; "
                         f"still there after the purge:\n{describe_all(remaining)}")
        self.nodeid = nodeid
        self.remaining = remaining


def stop_holders(stack: Any) -> list[str]:
    """SIGKILL every running worker and app process (what they hold in memory dies with them)."""
    stopped = []
    for index, worker in enumerate(stack.workers.workers):
        if worker.is_running():
            stack.workers.kill(index)
            stopped.append(worker.name)
    for name, proc in stack.processes.items():
        if proc.is_running():
            proc.kill()
            stopped.append(name)
    return stopped


def transports(stack: Any, sqs: Any = None) -> list[PendingWork]:
    """Every message still in the Redis broker or an SQS queue, parked ones included."""
    with stack.redis.client() as redis:
        items = read_redis_broker(redis)
    return items + read_sqs(sqs or stack.sqs.client())


def purge(stack: Any, sqs: Any = None) -> dict[str, Any]:
    """Delete the broker's queues and unacknowledged messages, empty every SQS queue."""
    with stack.redis.client() as redis:
        keys = purge_redis_broker(redis)
    return {"redis_keys_deleted": keys, "sqs_queues_emptied": purge_sqs(sqs or stack.sqs.client())}


def isolate(run: Any, left: list[PendingWork]) -> dict[str, Any]:
    """Remove what ``run``'s test left (``left``: the pending work read after its verdict), then verify.

    Returns what was done (also recorded in the test's history); raises
    ``IsolationError`` when the broker or SQS still hold anything after it.
    """
    stopped = stop_holders(run.stack) if blocking(left) else []
    sqs = run.stack.sqs.client()
    done = {"left": [item.to_dict() for item in left], "stopped": stopped, **purge(run.stack, sqs)}
    remaining = transports(run.stack, sqs)
    done["remaining"] = [item.to_dict() for item in remaining]
    run.history.record(v.HARNESS, "fail" if remaining else "ok", v.ISOLATE, data=done)
    if remaining:
        raise IsolationError(run.nodeid, remaining)
    return done
