"""``python -m refapp.consumer``: the SQS path, an asyncio consumer that never blocks its loop.

For each message: a delivery beyond ``max_attempts`` fails the job (the
queue allows more deliveries than the code, so this branch always gets
its turn); otherwise the job is claimed and the attempt runs in a bounded
thread pool while a heartbeat extends the message's visibility and the
job's heartbeat. The wait is capped (``sqs_attempt_cap``): past the cap the
attempt is declared dead (fenced out, its cancel flag set) and the message
is released for another attempt. The thread cannot be killed, but it can no
longer write or pay. Every boto3 and database call runs off the loop.

A message can come back while its attempt still runs: the window lapsed
before a renewal (a busy machine, a slow SQS). SQS then hands out a new
receipt handle and the old one stops working, so the running attempt could
neither renew nor delete its own message. When the attempt runs in this
consumer, the delivery is adopted: the attempt carries on with the newest
handle. Either way the delivery used up one receive, which is why the queue
leaves room for one such duplicate (``sqs_queues.max_receives``).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from refapp import budgets, jobrun, jobstore, logs, settings, sqs_queues
from refapp.attempt import Attempt, AttemptAbandoned
from refapp.failpoints import (
    CONSUMER_BEFORE_DELETE,
    CONSUMER_HEARTBEAT,
    CONSUMER_QUEUES_GONE,
    CONSUMER_RECEIVED,
    failpoint,
)
from refapp.mutants import mutant

log = logging.getLogger("refapp.consumer")

RECEIVE_WAIT = 1  # seconds of SQS long polling per receive call


class Consumer:
    """Receives job messages and runs one attempt per message, ``consumer_concurrency`` at a time."""

    def __init__(self, config: settings.Settings):
        self.config = config
        # bounded: abandoned threads can take at most one extra thread per slot
        self.executor = ThreadPoolExecutor(config.consumer_concurrency * 2, thread_name_prefix="attempt")
        self.url = ""
        self.queues_gone = False  # a receive found no queue: make them again before the next one
        self.tasks: set[asyncio.Task[None]] = set()
        # job id -> the receipt of the message its attempt runs under, in this process
        self.running: dict[str, _Receipt] = {}

    async def start(self) -> None:
        """Create the queues, set the redrive policy, and check that it took."""
        self.url = await asyncio.to_thread(sqs_queues.ensure_queues)
        limit = await asyncio.to_thread(sqs_queues.redrive_limit, self.url)
        if limit != sqs_queues.max_receives():
            raise RuntimeError(f"queue {self.url} redrives after {limit} receives, "
                               f"the code needs {sqs_queues.max_receives()}")
        log.info("consumer ready: queue %s, max attempts %d, dead-letter after %d receives",
                 self.url, self.config.max_attempts, limit)

    async def run(self, stop: asyncio.Event) -> None:
        """Receive and handle messages until ``stop`` is set."""
        slots = asyncio.Semaphore(self.config.consumer_concurrency)
        while await _slot_or_stop(slots, stop):
            messages = await self._receive()
            if not messages:
                slots.release()
                continue
            task = asyncio.create_task(self._handle_safely(messages[0], slots))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.executor.shutdown(wait=False, cancel_futures=True)

    async def _receive(self) -> list[dict[str, Any]]:
        try:
            if self.queues_gone:
                # made again here, inside the same guard: the queues can go again while they are
                # being made (a reset halfway), and an error here must not end the consumer
                await asyncio.to_thread(failpoint, CONSUMER_QUEUES_GONE)
                self.url = await asyncio.to_thread(sqs_queues.ensure_queues)
                self.queues_gone = False
            answer = await asyncio.to_thread(
                sqs_queues.client().receive_message, QueueUrl=self.url, MaxNumberOfMessages=1,
                WaitTimeSeconds=RECEIVE_WAIT, VisibilityTimeout=sqs_queues.visibility_seconds(),
                AttributeNames=["All"])
        except Exception as exc:  # noqa: BLE001 - queue gone (reset) or SQS down: retry soon
            if sqs_queues.is_missing_queue(exc):
                self.queues_gone = True  # the next pass makes them again, with the redrive rule
            else:
                log.warning("receive failed: %s", exc)
                await asyncio.sleep(RECEIVE_WAIT)
            return []
        return answer.get("Messages", [])

    async def _handle_safely(self, message: dict[str, Any], slots: asyncio.Semaphore) -> None:
        """Handle one message, then give its slot back whatever happened: a lost slot is lost for good."""
        kept = False
        try:
            kept = await self._handle(message)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - one bad message must not stop the consumer
            log.exception("message %s could not be handled; it will come back", message.get("MessageId"))
            # the wrong shape: the slot goes back only once a message was handled
            kept = mutant("consumer-slot-lost-on-error")
        finally:
            if not kept:
                slots.release()

    async def _handle(self, message: dict[str, Any]) -> bool:
        """Handle one message; True only where its slot stays taken (a wrong shape)."""
        receipt = message["ReceiptHandle"]
        job_id = json.loads(message["Body"])["job_id"]
        receives = int(message["Attributes"]["ApproximateReceiveCount"])
        await asyncio.to_thread(failpoint, CONSUMER_RECEIVED, job_id=job_id, receive_count=receives)
        if mutant("sqs-delete-on-receive"):
            # the wrong shape: "the database tracks the job now"; a crash or a retry has no message left
            await self._delete(receipt)
        held = self.running.get(job_id)
        if held is not None:
            # our own attempt's message, back after its window lapsed: its attempt takes the new handle
            log.info("job %s: message back while attempt %s runs here; renewed under the new receipt",
                     job_id, held.attempt)
            held.handle = receipt
            return False
        if receives >= self.config.max_attempts and await self._gave_up(job_id, receipt, receives):
            return False
        attempt, why = await asyncio.to_thread(jobstore.claim, job_id, "sqs")
        if attempt is None and why.startswith(jobstore.IN_HAND):
            # Maybe this very message, redelivered because the live attempt's window lapsed
            # before its first renewal: deleting it would take the live attempt's retry away.
            # Hand it back for later; by then the job is finished (deleted then) or stale.
            log.info("job %s: not now (%s)", job_id, why)
            await self._release(receipt, round(budgets.scaled("sqs_retry_backoff")))
            return False
        if attempt is None:
            log.info("job %s: nothing to do (%s)", job_id, why)
            await self._delete(receipt)
            return False
        # A failed attempt always goes back to the queue: the next delivery past
        # max_attempts is where the code gives up (see sqs_queues).
        held = self.running[job_id] = _Receipt(receipt, attempt.token)
        try:
            outcome = await self._run(attempt, held, may_retry=True)
        finally:
            self._forget(held, job_id)
        if outcome is None:
            # abandoned at the cap (its message already released); its thread may run on a while. The wrong
            # shape: the thread keeps the slot, to give it back when it ends, and nothing ever does
            return mutant("abandoned-attempt-keeps-slot")
        if outcome == "retry":
            await self._release(held.handle, self._backoff())
        else:
            await asyncio.to_thread(failpoint, CONSUMER_BEFORE_DELETE, **attempt.context(outcome=outcome))
            await self._delete(held.handle)
        return False

    async def _gave_up(self, job_id: str, receipt: str, receives: int) -> bool:
        """The delivery after the code's last attempt fails the job, once the job had every attempt; True
        when this delivery is settled (given up, or left to a live attempt), False when it runs an attempt."""
        limit = self.config.max_attempts
        last_attempts_own = receives == limit  # the code gives up on the delivery after it
        if last_attempts_own and not mutant("give-up-one-early"):
            return False
        # the wrong shape (give-up-one-early): the delivery of the last attempt gives up after one attempt fewer
        given = await asyncio.to_thread(jobstore.give_up, job_id, limit - 1 if last_attempts_own else limit)
        if given is None:
            return False  # deliveries that found the job in hand used receives, not attempts: run the next one
        if given or not await self._in_hand(job_id):
            await self._delete(receipt)
        else:  # a duplicate of a live attempt elsewhere: its message is its retry, keep it
            await self._release(receipt, round(budgets.scaled("sqs_retry_backoff")))
        return True

    def _backoff(self) -> int:
        """Seconds a job given back by a failed attempt waits before the queue offers it again."""
        if mutant("retry-without-backoff"):
            return 0  # the wrong shape: "let the queue offer it again at once"; a short outage eats every attempt
        return round(budgets.scaled("sqs_retry_backoff"))

    async def _in_hand(self, job_id: str) -> bool:
        return await asyncio.to_thread(jobstore.in_hand, job_id)

    async def _run(self, attempt: Attempt, receipt: _Receipt, *, may_retry: bool) -> str | None:
        """The attempt's outcome, or None when it ran past the cap and was released."""
        heartbeat = asyncio.create_task(self._keep_alive(attempt, receipt))
        work_fn = functools.partial(jobrun.run_attempt, attempt, may_retry=may_retry)
        try:
            if mutant("blocking-call-on-loop"):
                work = _already_done(work_fn)  # the wrong shape: the loop runs the job itself
            else:
                work = asyncio.get_running_loop().run_in_executor(self.executor, work_fn)
            return await asyncio.wait_for(work, timeout=self._cap())
        except TimeoutError:
            await self._stop_renewing(receipt)  # before the release, or a late renewal would shorten its backoff
            await self._abandon(attempt, receipt)
            return None
        finally:
            await self._stop_renewing(receipt)
            heartbeat.cancel()

    def _cap(self) -> float | None:
        if mutant("heartbeat-forever"):
            return None  # the wrong shape: the heartbeat hides a hung attempt for ever
        return budgets.scaled("sqs_attempt_cap")

    async def _abandon(self, attempt: Attempt, receipt: _Receipt) -> None:
        """The attempt ran past the cap: fence it out and let the queue offer the job again."""
        attempt.cancel.set()
        reason = (f"timeout: attempt {attempt.token} ran past its {self._cap():g}s cap; "
                  f"released for another attempt")
        with contextlib.suppress(AttemptAbandoned):  # somebody else already took it over
            await asyncio.to_thread(jobstore.requeue, attempt, reason)
        log.warning("job %s: %s", attempt.job_id, reason)
        self._forget(receipt, attempt.job_id)  # before the release: the next delivery is a new attempt's
        await self._release(receipt.handle, self._backoff())  # a failed attempt like any other

    async def _keep_alive(self, attempt: Attempt, receipt: _Receipt) -> None:
        """Extend the message's visibility and the job's heartbeat while the attempt runs.

        Each on its own: a renewal the queue refuses (the message was delivered
        again meanwhile, and its receipt is stale) must not keep the job's
        heartbeat from telling the attempt it was declared dead, and a database
        blip must not let the message go.
        """
        window = sqs_queues.visibility_seconds()
        while True:
            await asyncio.sleep(window / 3)
            try:
                await asyncio.to_thread(failpoint, CONSUMER_HEARTBEAT, **attempt.context())
                async with receipt.lock:  # a renewal under way ends before the message is released
                    if not receipt.renewing:
                        return
                    await asyncio.to_thread(sqs_queues.client().change_message_visibility, QueueUrl=self.url,
                                            ReceiptHandle=receipt.handle, VisibilityTimeout=window)
            except Exception as exc:  # noqa: BLE001 - one missed renewal is survivable
                log.warning("job %s: message renewal failed: %s", attempt.job_id, exc)
            if mutant("sqs-heartbeat-message-only"):
                continue  # the wrong shape: the queue knows the attempt lives, the sweeper does not
            try:
                # the job's heartbeat too: the sweeper and every claim read it, not the queue
                if not await asyncio.to_thread(attempt.beat):
                    log.warning("job %s: attempt %s was declared dead", attempt.job_id, attempt.token)
                    return
            except Exception as exc:  # noqa: BLE001 - one missed beat is survivable
                log.warning("job %s: heartbeat failed: %s", attempt.job_id, exc)

    async def _stop_renewing(self, receipt: _Receipt) -> None:
        """No renewal of the message after this returns: one under way has ended (the release's backoff stands)."""
        async with receipt.lock:
            receipt.renewing = False

    def _forget(self, held: _Receipt, job_id: str) -> None:
        if self.running.get(job_id) is held:
            del self.running[job_id]

    async def _release(self, receipt: str, seconds: int) -> None:
        await self._call(sqs_queues.client().change_message_visibility,
                         QueueUrl=self.url, ReceiptHandle=receipt, VisibilityTimeout=seconds)

    async def _delete(self, receipt: str) -> None:
        await self._call(sqs_queues.client().delete_message, QueueUrl=self.url, ReceiptHandle=receipt)

    async def _call(self, fn: Callable[..., Any], **kwargs: Any) -> None:
        try:
            await asyncio.to_thread(fn, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the message comes back on its own
            log.warning("%s failed: %s", getattr(fn, "__name__", fn), exc)


@dataclasses.dataclass
class _Receipt:
    """The newest receipt handle of a message whose attempt runs in this consumer."""

    handle: str
    attempt: int
    renewing: bool = True  # the heartbeat may still extend the message's visibility
    lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)


async def _slot_or_stop(slots: asyncio.Semaphore, stop: asyncio.Event) -> bool:
    """Wait for a free slot (True, slot taken) or for ``stop`` (False)."""
    if stop.is_set():
        return False
    acquiring = asyncio.ensure_future(slots.acquire())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({acquiring, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if acquiring.done() and not stop.is_set():
        return True
    if acquiring.done():
        slots.release()
    else:
        acquiring.cancel()
    return False


def _already_done(fn: Callable[[], str]) -> asyncio.Future[str]:
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    future.set_result(fn())
    return future


async def _serve(config: settings.Settings) -> None:
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    consumer = Consumer(config)
    await consumer.start()
    try:
        await consumer.run(stop)
    finally:
        await consumer.close()


def main() -> None:
    """Consume until SIGTERM / SIGINT."""
    logs.setup("consumer")
    code = 0
    try:
        asyncio.run(_serve(settings.for_process()))
    except Exception:
        log.exception("consumer stopped")
        code = 1
    logging.shutdown()
    # Threads still running abandoned attempts cannot be joined or killed; they are
    # fenced out, so leaving them behind is safe, and waiting for them is not.
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
