"""Where moto and LocalStack differ in ways a fault can turn on: measured on each, side by side.

For each server (started as the stack starts it, process backend):

* visibility timeout precision: a message received with a 1 s visibility
  timeout, polled every 10 ms: when it is visible again;
* a long poll waiting while the message is hidden: how long after the timeout
  it hands the message over;
* ApproximateReceiveCount after three deliveries;
* redrive timing (maxReceiveCount 2): after the last allowed delivery expires,
  is the message in the dead-letter queue before anyone receives again, and
  what does the next receive on the source queue get;
* a stale receipt handle (from an earlier delivery of a message delivered
  again): does DeleteMessage with it delete, and does ChangeMessageVisibility
  with it hide the message (a dead attempt's heartbeat renewing a live one's)?

    .venv/bin/python benchmarks/sqs_semantics.py

prints a table and writes ``benchmarks/results/sqs_semantics.json``.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness._ports import free_port, release_port  # noqa: E402
from harness.stack import reaper  # noqa: E402
from harness.stack.localstack import LocalStackSQS  # noqa: E402
from harness.stack.sqs import QueueSpec, SQSService  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "sqs_semantics.json"
QUEUES = [QueueSpec("dlq", 1), QueueSpec("jobs", 1, "dlq", 2), QueueSpec("plain", 1)]
POLL = 0.01


def visible_again_after(sqs: Any, url: str) -> float:
    """Seconds from a receive with VisibilityTimeout=1 to the message being receivable again."""
    sqs.send_message(QueueUrl=url, MessageBody="v")
    sqs.receive_message(QueueUrl=url, VisibilityTimeout=1, WaitTimeSeconds=1)
    started = time.perf_counter()
    while not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0, VisibilityTimeout=30).get("Messages"):
        time.sleep(POLL)
    return time.perf_counter() - started


def long_poll_hands_over_after(sqs: Any, url: str) -> float:
    """Seconds from a receive with VisibilityTimeout=1 to a waiting long poll getting the message."""
    sqs.send_message(QueueUrl=url, MessageBody="l")
    sqs.receive_message(QueueUrl=url, VisibilityTimeout=1, WaitTimeSeconds=1)
    started = time.perf_counter()
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5, VisibilityTimeout=30).get("Messages")
    return time.perf_counter() - started if got else float("inf")


def receive_count_after_three(sqs: Any, url: str) -> int:
    sqs.send_message(QueueUrl=url, MessageBody="c")
    count = 0
    for _ in range(3):
        msg = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1,
                                  AttributeNames=["ApproximateReceiveCount"])["Messages"][0]
        count = int(msg["Attributes"]["ApproximateReceiveCount"])
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=0)
    return count


def redrive(sqs: Any, url: str, dlq: str) -> dict[str, Any]:
    """maxReceiveCount 2: two deliveries expire; where is the message before and after the next receive?"""
    sqs.send_message(QueueUrl=url, MessageBody="r")
    for _ in range(2):
        sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, VisibilityTimeout=1)
        time.sleep(1.2)  # past the visibility timeout: measuring what the server does meanwhile
    in_dlq_before = _count(sqs, dlq)
    third = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, VisibilityTimeout=1).get("Messages")
    return {"in_dlq_before_next_receive": in_dlq_before, "next_receive_gets_it": bool(third),
            "in_dlq_after_next_receive": _count(sqs, dlq)}


def stale_handle(sqs: Any, url: str) -> dict[str, bool]:
    """A message delivered twice; the first delivery's receipt handle used against the second."""
    sqs.send_message(QueueUrl=url, MessageBody="s")
    first = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, VisibilityTimeout=1)["Messages"][0]["ReceiptHandle"]
    time.sleep(1.2)
    sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, VisibilityTimeout=1)["Messages"]
    extended = _ok(lambda: sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=first, VisibilityTimeout=30))
    time.sleep(1.2)  # the second delivery's own timeout has passed: visible unless the stale handle extended it
    hidden = not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0, VisibilityTimeout=1).get("Messages")
    time.sleep(1.2)
    deleted_call = _ok(lambda: sqs.delete_message(QueueUrl=url, ReceiptHandle=first))
    gone = not sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2, VisibilityTimeout=1).get("Messages")
    return {"stale_change_visibility_accepted": extended, "stale_change_visibility_hides": hidden,
            "stale_delete_accepted": deleted_call, "stale_delete_deletes": gone}


def _ok(call: Callable[[], Any]) -> bool:
    try:
        call()
        return True
    except Exception:  # noqa: BLE001 - an error answer is the measurement
        return False


def _count(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    return int(attrs["Attributes"]["ApproximateNumberOfMessages"])


def measure(cls: type[SQSService]) -> dict[str, Any]:
    svc = cls("sqs", port=free_port(), workdir=reaper.run_dir() / f"sqs-semantics-{cls.sqs_service}",
              queues=list(QUEUES))
    svc.start()
    try:
        sqs, plain = svc.client(), svc.queue_url("plain")
        result: dict[str, Any] = {}
        result["visible_again_s"] = [round(visible_again_after(sqs, plain), 3) for _ in range(3)]
        svc.reset()
        result["long_poll_hands_over_s"] = [round(long_poll_hands_over_after(sqs, plain), 3) for _ in range(3)]
        svc.reset()
        result["receive_count_after_3"] = receive_count_after_three(sqs, plain)
        svc.reset()
        result["redrive_max_2"] = redrive(sqs, svc.queue_url("jobs"), svc.queue_url("dlq"))
        svc.reset()
        result["stale_receipt_handle"] = stale_handle(sqs, plain)
        return result
    finally:
        svc.stop()
        release_port(svc.port)


def main() -> int:
    reaper.reap()
    results = {cls.sqs_service: measure(cls) for cls in (SQSService, LocalStackSQS)}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    reaper.remove_run_dir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
