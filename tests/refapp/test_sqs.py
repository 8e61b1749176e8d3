"""The SQS path: heartbeat-extended visibility, retries by redelivery, and a queue limit one above the code's."""
from __future__ import annotations

import httpx

from harness import wait_until
from refapp import settings, sqs_queues, submit
from refapp.failpoints import CONSUMER_HEARTBEAT, CONSUMER_QUEUES_GONE
from tests.refapp.conftest import Stack


def test_the_queue_dead_letters_one_delivery_after_the_code_gives_up(stack: Stack) -> None:
    assert sqs_queues.redrive_limit(sqs_queues.queue_url()) == settings.get().max_attempts + 2


def test_a_job_on_the_sqs_path_runs_to_done(stack: Stack) -> None:
    response = stack.submit(project="p-sqs", file="a.pdf", route="sqs", documents=["invoice 1", "letter 2"])
    job = stack.wait_terminal(response.json()["job_id"])

    assert (job["state"], job["route"], job["attempt"]) == ("done", "sqs", 1)


def test_the_heartbeat_keeps_a_long_attempts_message_hidden(stack: Stack) -> None:
    job_id = submit.job_id_for("p-sqs", "long.pdf")
    # 8 calls of 0.2 s: the attempt lasts longer than the 1 s visibility window it started with
    stack.paid_mode(mode="slow", job_id=job_id, seconds=40)

    stack.submit(project="p-sqs", file="long.pdf", route="sqs", documents=[f"page {n}" for n in range(8)])
    job = stack.wait_terminal(job_id)

    assert (job["state"], job["attempt"]) == ("done", 1)
    assert f"job {job_id}: nothing to do" not in stack.procs["consumer"].log_text()


def test_a_message_back_while_its_attempt_runs_here_is_adopted_not_lost(stack: Stack) -> None:
    """A late renewal lets the message come back mid-attempt; the attempt carries on under the new receipt.

    SQS gives the redelivery a new receipt handle and voids the old one, so
    an attempt still renewing, then deleting, with the old handle could
    neither: its message would come back again and again, using up receives.
    """
    job_id = submit.job_id_for("p-sqs", "late-renewal.pdf")
    stack.paid_mode(mode="slow", job_id=job_id, seconds=40)  # 0.2 s a call: 12 calls outlast the 1 s window
    stalled = stack.failpoints.arm(CONSUMER_HEARTBEAT, "hang", once=True, match={"job_id": job_id})

    stack.submit(project="p-sqs", file="late-renewal.pdf", route="sqs", documents=[f"page {n}" for n in range(12)])
    consumer = stack.procs["consumer"]
    wait_until(lambda: f"job {job_id}: message back while attempt 1 runs here" in consumer.log_text(),
               timeout=10, what="the lapsed message delivered again mid-attempt")
    stalled.release()
    job = stack.wait_terminal(job_id)

    assert (job["state"], job["attempt"]) == ("done", 1)
    log = consumer.log_text()
    assert "ReceiptHandleIsInvalid" not in log  # the renewals and the delete used the newest handle
    assert f"job {job_id}: nothing to do" not in log  # the message was deleted, not left to come back
    assert f"job {job_id}: not now" not in log


def test_a_job_that_always_fails_is_failed_by_the_code_not_lost_to_the_dead_letter_queue(stack: Stack) -> None:
    job_id = submit.job_id_for("p-sqs", "doomed.pdf")
    stack.paid_mode(mode="fail", job_id=job_id, status=500)

    stack.submit(project="p-sqs", file="doomed.pdf", route="sqs", documents=["one"])
    job = stack.wait_terminal(job_id, timeout=30)

    attempts = settings.get().max_attempts
    assert job["state"] == "failed"
    assert job["reason"].startswith(f"error: gave up after {attempts} attempts (last: error: provider returned 500")
    assert [c["attempt"] for c in stack.ledger(job_id=job_id)] == list(range(1, attempts + 1))


def test_a_consumer_whose_queues_went_away_while_it_made_them_again_keeps_going(stack: Stack) -> None:
    """The queues are deleted under the consumer (a reset); making them again fails once (they went again
    halfway, which leaves a redrive rule naming a queue that is gone): the consumer lives, tries again
    on its next pass, and the queue it makes has the redrive rule the code needs."""
    gone = {"Error": {"Code": "AWS.SimpleQueueService.NonExistentQueue", "Message": "Could not find DLQ"}}
    failed = stack.failpoints.arm(CONSUMER_QUEUES_GONE, "raise", once=True,
                                  exception="botocore.exceptions.ClientError", args=[gone, "SetQueueAttributes"])
    httpx.post(f"{stack.env['REFAPP_SQS_ENDPOINT']}/moto-api/reset", timeout=5).raise_for_status()
    failed.wait(timeout=10)  # the consumer's next receive found no queue and its first remake failed

    consumer = stack.procs["consumer"]
    response = stack.submit(project="p-sqs", file="after-reset.pdf", route="sqs", documents=["one"])
    job = stack.wait_terminal(response.json()["job_id"])

    assert (job["state"], job["attempt"]) == ("done", 1)
    assert consumer.proc.poll() is None, consumer.log_text()
    assert "consumer stopped" not in consumer.log_text()
    # read, not made: ensure_queues here would set the rule itself and the check could not fail
    url = sqs_queues.client().get_queue_url(QueueName=settings.get().sqs_queue)["QueueUrl"]
    assert sqs_queues.redrive_limit(url) == settings.get().max_attempts + 2
