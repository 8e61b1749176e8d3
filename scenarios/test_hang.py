"""An endpoint that accepts a call and never answers it.

The paid model API takes the request, and then nothing: no answer, no error,
the connection just stays open. Nothing on the client's side ends that wait
except a deadline of its own. refapp gives every model call one
(``REFAPP_MODEL_DEADLINE_S``, 100 s here, not the budget table's 120 s):
when it passes, the document fails with a reason that starts ``timeout:``,
the job ends ``failed``, and the worker slot is free for the next job.

The hang happens at one of two places, and they fail differently:

* at the provider (``layer="provider"``): it reads the request and never
  starts the work. Nothing is billed.
* on the network (``layer="network"``: the fault proxy's ``timeout`` toxic,
  timeout 0): the request gets through, the provider does the work and
  bills it, and the answer is dropped on the way back. The provider's
  ledger says "answered"; only the client knows it never got the answer.

The bugs these scenarios catch are refapp's mutants ``no-deadline`` (no
deadline on the call: a hung call holds its worker slot until the batch
budget runs out), ``dead-config-deadline`` (the setting is never read: the
table's 120 s applies) and ``timeout-unlabelled`` (the timeout is reported
as a plain error).

Each scenario hangs every call from some moment on (or the next few): a
rule for one job would need the job's id, which the app gives only once
the job is submitted, too late to be sure its call has not been made.
"""
from typing import Any

import pytest

from harness import Run, wait_until
from harness.faults import HangEndpoint
from scenarios.hang_support import (configured_deadline, record_item_outcomes, submit_one_document_jobs,
                                    worker_slots)
from scenarios.refapp_client import RefApp

# The per-call deadline the stack is configured with: REFAPP_MODEL_DEADLINE_S = "100" (real
# seconds, pyproject.toml) at the default time scale 0.01. An app that ignores the setting uses
# the budget table's 120 s instead: 1.2 s here.
DEADLINE = 1.0
# Half the 0.2 s between the configured deadline and the table's, so the two cannot be confused.
# A job gives up its call within a few milliseconds of the deadline (see record_item_outcomes).
SLACK = 0.1
# A hung job's reason must say "timeout:" (with the colon: a mislabelled "error: ...
# ReadTimeout(...)" contains the bare word). timeout_labelled needs the deadline to recognise a
# hung call once the hang is healed: healing answers the call 503, so the ledger no longer says
# "hung".
LABELLED = {"deadline": DEADLINE, "label": "timeout:"}
# ... and it must end at the configured deadline.
ON_TIME = {"deadline_honoured": {"deadline": DEADLINE, "slack": SLACK}, "timeout_labelled": LABELLED}
# Generous: a job ends one deadline after its call starts, but the machine may be busy.
WAIT = 5 * DEADLINE


def assert_timed_out(job: dict[str, Any]) -> None:
    """The job ended failed, and its reason says the call timed out."""
    assert job["state"] == "failed", job
    assert job["reason"].startswith("timeout:"), job


@pytest.mark.jobquake(checks=["timeout_labelled", "deadline_honoured"], options=ON_TIME)
@pytest.mark.catches("timeout-unlabelled", invariant="timeout_labelled")
@pytest.mark.catches("dead-config-deadline", invariant="deadline_honoured")
@pytest.mark.catches("no-deadline", invariant="deadline_honoured")
def test_a_provider_that_never_answers_fails_each_job_at_the_deadline(jq: Run, refapp: RefApp) -> None:
    """The provider accepts every call and never answers; nothing is billed.

    One more job than there are worker slots: the first ones take every
    slot and hang; the last can only start when a slot is freed, which the
    right app does at the deadline. Every job ends ``failed`` with
    ``timeout:``, one deadline after its call began. With ``no-deadline``
    the calls never end and the last job never starts; with
    ``dead-config-deadline`` they end at 1.2 s instead of 1.0 s; with
    ``timeout-unlabelled`` the reason says ``error:``.
    """
    assert configured_deadline(jq) == pytest.approx(DEADLINE), "the checks' options assume this deadline"
    slots = worker_slots(jq)
    jq.faults.hang_endpoint(layer="provider")  # every call from now on: accepted, never answered

    first = submit_one_document_jobs(refapp, slots, "fills-a-slot")
    wait_until(lambda: len(jq.paidapi.ledger(state="hung")) == slots, timeout=WAIT,
               what=f"{slots} calls hung at the provider, one per worker slot")
    last = refapp.submit(["invoice from Initech"], file="waits-for-a-slot.pdf")

    for job_id in [*first, last]:
        assert_timed_out(refapp.wait_for(job_id, timeout=WAIT))
        assert jq.paidapi.billed(job_id) == []  # the provider never did the work
    assert len(jq.paidapi.ledger(state="hung")) == slots + 1  # the last job did get its turn
    record_item_outcomes(jq, refapp)  # when each job gave up its call, for deadline_honoured


@pytest.mark.jobquake(checks=["deadline_honoured"], options=ON_TIME)
@pytest.mark.catches("dead-config-deadline", invariant="deadline_honoured")
def test_an_answer_lost_on_the_network_fails_each_job_at_the_deadline(jq: Run, refapp: RefApp) -> None:
    """Requests reach the provider, which works and bills; every answer is dropped on the way back.

    The same shape as at the provider, and the same outcome for the user:
    every job ``failed`` with ``timeout:`` one deadline after its call began,
    the last one after a slot was freed. The difference is the bill: each
    call was billed once, for an answer nobody received. The provider's
    ledger shows those calls as answered in time, so the only clock left is
    the app's own: ``deadline_honoured`` reads when each job wrote its
    failed document. With ``dead-config-deadline`` that is 1.2 s after the
    call began, not 1.0 s.
    """
    assert configured_deadline(jq) == pytest.approx(DEADLINE), "the checks' options assume this deadline"
    slots = worker_slots(jq)
    # the proxy cannot tell jobs apart: every call through it from now on loses its answer
    jq.faults.hang_endpoint(layer="network")

    first = submit_one_document_jobs(refapp, slots, "fills-a-slot")
    wait_until(lambda: len(jq.paidapi.billed()) == slots, timeout=WAIT,
               what=f"{slots} calls answered and billed by the provider, one per worker slot")
    last = refapp.submit(["invoice from Initech"], file="waits-for-a-slot.pdf")

    for job_id in [*first, last]:
        assert_timed_out(refapp.wait_for(job_id, timeout=WAIT))
        jq.paidapi.wait_for_call(job_id, state="billed", timeout=WAIT)  # the work was done and paid for
    record_item_outcomes(jq, refapp)  # when each job gave up its call, for deadline_honoured


@pytest.mark.jobquake(settle=2, checks=["deadline_honoured"], options=ON_TIME)
@pytest.mark.catches("no-deadline", invariant="every_job_terminal")
def test_hung_calls_do_not_stop_the_jobs_queued_behind_them(jq: Run, refapp: RefApp) -> None:
    """The provider hangs as many calls as there are worker slots, then answers normally again.

    Every slot is taken by a hung call when an ordinary job arrives. The
    right app frees the slots at the deadline: the hung jobs end ``failed``
    (``timeout:``), the ordinary job gets a slot and ends ``done``. With
    ``no-deadline`` nothing ends the hung calls but the batch budget (6 s):
    every slot stays taken and the ordinary job sits ``queued``. The wait
    for it gives up well before that budget, the run is judged at once, and
    ``every_job_terminal`` finds five jobs that never ended. (Should the
    scenario return with jobs still running, the settle bound of 2 s, twice
    what the right app needs, keeps the judgement as quick.)

    The hang's ``count`` hangs only the next calls, so the ordinary job's
    call is answered. It is kept in place while the run is judged
    (``jq.faults.keep``): healing a hang answers its calls 503, which would
    let go the workers the bug wedged and hide the bug. The heal at teardown
    answers the calls it still holds.
    """
    assert configured_deadline(jq) == pytest.approx(DEADLINE), "the checks' options assume this deadline"
    slots = worker_slots(jq)
    jq.faults.keep(HangEndpoint(count=slots))  # the next `slots` calls: accepted, never answered

    hung = submit_one_document_jobs(refapp, slots, "hangs")
    wait_until(lambda: len(jq.paidapi.ledger(state="hung")) == slots, timeout=WAIT,
               what=f"{slots} calls hung at the provider, one per worker slot")
    ordinary = refapp.submit(["train ticket Paris-Lyon"], file="ordinary.pdf")

    # bounded well below the batch budget (6 s), the only other thing that would end a hung call
    assert refapp.wait_for(ordinary, timeout=4 * DEADLINE)["state"] == "done"
    for job_id in hung:  # each gave up its call at the deadline; its last write may still be landing
        assert_timed_out(refapp.wait_for(job_id, timeout=WAIT))
    assert len(jq.paidapi.billed(ordinary)) == 1
    record_item_outcomes(jq, refapp)  # when each job gave up its call, for deadline_honoured


@pytest.mark.jobquake(checks=["timeout_labelled"], options={"timeout_labelled": LABELLED})
@pytest.mark.catches("timeout-unlabelled", invariant="timeout_labelled")
def test_a_hang_is_reported_as_a_timeout_and_a_provider_error_is_not(jq: Run, refapp: RefApp) -> None:
    """A call that hangs and a call that fails end the same way (``failed``) for different reasons.

    The user, and whoever is on call, must be able to tell them apart: a
    hang says ``timeout:`` (wait, or raise the deadline), a provider error
    says ``error:`` with the status (the provider is broken). With
    ``timeout-unlabelled`` the hang reads ``error: provider call failed:
    ReadTimeout(...)``, the same shape as the 500.
    """
    hang = jq.faults.hang_endpoint(layer="provider")
    hanging = refapp.submit(["invoice from ACME"], file="hangs.pdf")
    assert_timed_out(refapp.wait_for(hanging, timeout=WAIT))
    hang.heal()

    with jq.faults.paidapi_mode("fail", status=500):  # answered at once with a 500, not billed
        failing = refapp.submit(["invoice from Initech"], file="fails.pdf")
        job = refapp.wait_for(failing, timeout=WAIT)
    assert job["state"] == "failed", job
    assert job["reason"].startswith("error:") and "500" in job["reason"], job
