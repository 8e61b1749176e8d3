"""A batch that outlasts its time budget must end, and say how far it got.

Celery's soft time limit raises ``SoftTimeLimitExceeded`` wherever the task
happens to be: almost always inside one document's work. The right app lets
it through every per-item catch-all, marks the job ``failed`` with
``timeout: timed out after i of n documents``, and leaves before the hard
limit, which kills the process and runs no cleanup code at all. A catch-all
that takes the abort for one document's failure (in the batch loop, or one
level down in the per-document helper) lets the loop go on until the hard
limit kills it mid-write: the job stays ``running`` and nobody is told.
"""
import time

import pytest

from harness import Run
from scenarios.refapp_client import RefApp, TERMINAL

DOCUMENTS = 12
HELD_DOCUMENT = 3  # its work is still going on when the budget runs out
MODEL_CALL_S = 60  # real seconds per call (0.6 s scaled): under the 100 s per-call deadline
SLACK_S = 1.0  # seconds on top of the hard limit: the right app ends 3 s before it

# refapp.process_job: soft 600 s / hard 900 s, i.e. 6 s / 9 s at the default time scale 0.01;
# the settle bound sits just above the hard limit so a job the hard limit left behind is judged
# without waiting the default settle time
SETTLE_BOUND_S = 10


# every_job_terminal sees the job left running only until a redelivery of the killed task ends it;
# the hard-limit kill itself is there every time
@pytest.mark.catches("swallow-soft-limit", invariant="soft_limit_honoured")
@pytest.mark.catches("helper-swallows-abort", invariant="soft_limit_honoured")
@pytest.mark.catches("progress-off-by-one", invariant="reasons_match_evidence")
@pytest.mark.catches("retry-any-exception", invariant="retries_keep_spacing_and_budget")
# settled below, while the sweeper is still off; the reason's "after i of n" is judged against the steps done
@pytest.mark.jobquake(settle=False, checks=["reasons_match_evidence", "soft_limit_honoured"])
def test_a_batch_past_its_soft_limit_fails_with_its_progress(jq: Run, refapp: RefApp) -> None:
    """Slow model calls, and document 3 still in progress when the 600 s soft limit fires.

    Fault: every model call is slow (60 s), so the 12 documents need far
    more than the batch budget; the work on document 3 is held before its
    paid call until the soft limit interrupts it, so the limit lands inside
    one document's work every time, not by luck of timing.
    Right: the job is ``failed`` with ``timeout: timed out after 3 of 12
    documents ...`` well before the 900 s hard limit.
    Bug (``swallow-soft-limit`` in the batch loop, ``helper-swallows-abort``
    in the per-document helper): the limit is recorded as document 3's
    error, documents 4.. go on at 60 s each, the hard limit kills the worker
    process, and the job stays ``running`` for ever.
    The sweeper is stopped: it would see the killed attempt's heartbeat go
    stale and send the job again, hiding that the first attempt never ended.
    """
    jq.faults.stop_service("sweeper")
    jq.faults.paidapi_mode("slow", seconds=MODEL_CALL_S)  # the only job of this scenario
    held = jq.faults.failpoint("task.before_paid_call", "hang", once=True,
                               match={"step": f"doc-{HELD_DOCUMENT}.categorise"})

    job_id = refapp.submit([f"scanned page {i}" for i in range(DOCUMENTS)])
    refapp.wait_for(job_id, "running", *TERMINAL, timeout=30)
    claimed = time.monotonic()
    held.wait(timeout=30)

    hard_limit = jq.scaled(900)
    job = refapp.wait_for(job_id, timeout=hard_limit + SLACK_S)
    ended_after = time.monotonic() - claimed
    assert job["state"] == "failed", f"the batch ended {job['state']}: {job['reason']}"
    assert job["reason"].startswith(f"timeout: timed out after {HELD_DOCUMENT} of {DOCUMENTS} documents"), \
        job["reason"]
    assert ended_after < hard_limit, f"the job ended {ended_after:.1f}s after its claim, after the hard limit"
    jq.settle(SETTLE_BOUND_S)
