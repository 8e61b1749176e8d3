"""The scenario files ``jobquake init`` writes; ``$NAME`` is filled from the scan (see render.py).

Each is written to be read first and edited: the inferred values are
constants at the top with where they came from; a scenario whose value
could not be inferred skips with the exact constant to fill in.
"""
from __future__ import annotations

from string import Template

PYTEST_SECTION = """
# pytest takes this folder as its root, so jobquake reads the [tool.jobquake] above
[tool.pytest.ini_options]
"""

CONFTEST = '''"""This project as its scenarios see it: how a job is submitted. Written by `jobquake init`."""
import pytest

from harness.appclient import AppClient

# $SUBMIT_WHY; it runs in a process of its own,
# with the app's environment, as it would in production
SUBMIT = $SUBMIT


def job_args(n: int) -> dict:
    """The arguments of job number ``n`` (each job a little different)."""
    return $JOB_ARGS


@pytest.fixture
def app(jq):
    """Submit jobs (recorded in the run's history), read their rows, wait for their states."""
    if SUBMIT is None:
        pytest.skip("TODO(jobquake init): set SUBMIT in scenarios/conftest.py")
    client = AppClient(jq, submit=SUBMIT, job_args=job_args)
    yield client
    client.close()
'''

KILL = '''"""A worker is killed while it waits on the model: the job must still end, and be billed once.

Every paid call is held at the provider; once one is held, every worker is
SIGKILLed (main process and pool children: no handler runs, nothing is
acknowledged); the provider then answers and bills the call its client
will never read; fresh workers start. The job's message must come back
from the broker (late acks), the next attempt must reuse the call's
idempotency key (the provider replays instead of billing again), and the
job must end. The global invariants judge: every job terminal, no paid
call billed twice, no accepted submission lost.
"""
import pytest

# $SWEEPER_WHY: stopped, so the broker's redelivery is tested alone
SWEEPER = $SWEEPER
MARGIN = 10.0  # seconds of slack for a busy machine
SUBMITTED_WITHIN = 60.0  # seconds a submission may take on a busy machine (a process of its own)


@pytest.mark.jobquake(settle=False)  # settled below, within settle_timeout
def test_a_job_whose_worker_dies_mid_call_still_ends_and_is_billed_once(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    gate = jq.paidapi.gate()  # every paid call is held until the gate goes
    submitted = app.submit_job_later(1)  # the kill must land within the call's deadline: no waiting
    held = gate.wait(timeout=SUBMITTED_WITHIN)  # a worker is blocked on the model now
    # the worker that holds the call is among them: every worker dies, whichever made it
    kills = [jq.faults.kill_worker(worker.name) for worker in jq.stack.workers.workers]
    if held.get("job_id") is not None and app.job(held["job_id"])["state"] in jq.config.terminal_states:
        pytest.fail("the job ended before the kill landed (its call's deadline passed first): nothing was "
                    "tested; a longer deadline in [tool.jobquake.env] gives the kill more room")
    gate.heal()  # the provider finishes and bills; nobody is there to read the answer
    for kill in kills:
        kill.heal()  # a fresh worker in each dead one's place
    submitted.result(timeout=SUBMITTED_WITHIN)  # the submission is on record
    jq.settle()  # then the invariants judge (every_job_terminal names a job that is stuck, and how)
'''

HANG = '''"""The model provider accepts a call and never answers: the job must end at the call's deadline.

Nothing but the app's own deadline on the call ends such a wait. The
``deadline_honoured`` check measures, per job, from the start of its last
paid call (the provider's ledger) to the job's end (the database): it must
be the configured deadline, give or take ``SLACK``.
"""
import pytest

# found: the model call's deadline, in this run's seconds ([tool.jobquake.env])
DEADLINE_VAR = $DEADLINE_VAR
DEADLINE = $DEADLINE_S
SLACK = 0.5  # of the deadline: the work between giving up and saving the outcome, on a busy machine
CHECK = {"deadline_honoured": {"deadline": float(DEADLINE or 0), "slack": float(DEADLINE or 0) * SLACK}}


@pytest.mark.jobquake(checks=["deadline_honoured"], options=CHECK)
def test_a_call_that_is_never_answered_ends_its_job_at_the_deadline(jq, app):
    if DEADLINE_VAR is None:
        pytest.skip("TODO(jobquake init): set DEADLINE_VAR and DEADLINE in scenarios/test_hang.py")
    assert float(jq.config.env[DEADLINE_VAR]) == float(DEADLINE), "the check's options assume this deadline"
    jq.faults.hang_endpoint(layer="provider")  # every call from now on: accepted, never answered
    job_id = app.submit_job(1)
    app.wait_for(job_id, timeout=10 * float(DEADLINE) + 5)
'''

POOL = '''"""The database pool runs dry between the job's write and its enqueue: the job must still run.

The framework failpoint ``$POOL_AT`` fires in the process
that submits, right after the job's transaction commits; its action empties
that process's $POOL_KIND pool (every connection held by the harness). An
app that queues the job in a second step, needing the database again,
times out there: the job is saved and never run. An app that writes the
job and its message together (an outbox) has nothing left to do. The
global invariants judge: no accepted submission lost, every job terminal.
"""
import pytest

# $SWEEPER_WHY: stopped, so it cannot rescue a lost job and hide it
SWEEPER = $SWEEPER
HOLD_AT_MOST = 5.0  # seconds the connections are held, if the scenario broke before healing
MARGIN = 10.0


@pytest.mark.jobquake(settle=False)  # settled below
def test_a_job_is_run_although_the_pool_ran_dry_right_after_its_write(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    dry = jq.faults.exhaust_pool(at="$POOL_AT", match=app.submitter_match(),
                                 timeout=HOLD_AT_MOST)
    app.submit_job(1)
    dry.wait(timeout=MARGIN)  # the pool really was emptied, in the submitting process
    dry.heal()
    jq.settle(timeout=MARGIN)  # then the invariants judge
'''

SWEEP = '''"""A poison row in the sweep: one row the sweep cannot handle must not stop the others.

Rows the sweep picks up (``STALE_JOB``: jobs whose worker died long ago)
and one poison row among them (``POISON`` on top: a value the sweep's
per-row work raises on). A sweep with per-row isolation (a savepoint per
row) handles the good rows and ends the poison one; one that is not loses
the whole pass, on every pass. The global invariants judge: every job
terminal.
"""
import datetime as dt

import pytest

LONG_AGO = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).isoformat()
# $TODO: a job row your sweep picks up, as column -> value (e.g. a state and
# a heartbeat of LONG_AGO), and the change that makes one of them poison
STALE_JOB: dict = $STALE_JOB
POISON: dict = {}
GOOD_ROWS = 3
MARGIN = 10.0  # seconds: the sweep runs every few seconds at most, and the jobs it sends again are quick


# it submits nothing (the rows are written as the sweep finds them): no submission to follow
@pytest.mark.jobquake(settle=False, skip_checks=["no_lost_submission"])  # settled below, before the poison row is healed away
def test_a_poison_row_does_not_stop_the_sweep(jq, app):
    if not STALE_JOB or not POISON:
        pytest.skip("TODO(jobquake init): fill STALE_JOB and POISON in scenarios/test_sweep.py")
    good = [app.insert_job(STALE_JOB) for _ in range(GOOD_ROWS // 2)]
    # found again (and removed at heal) by the poison columns alone
    jq.faults.poison_row(jq.config.job_table, values={**STALE_JOB, **POISON}, key=list(POISON))
    good += [app.insert_job(STALE_JOB) for _ in range(GOOD_ROWS - len(good))]
    # settled here, with the poison row in place: healing deletes it, and a sweep without per-row
    # isolation would then recover and hide itself
    jq.settle(timeout=MARGIN)
'''

SOFT = '''"""A job outlasts its soft time limit: it must end, and before the hard limit kills it.

Every paid call is held before it is sent (framework failpoint
``http.before_paid_call``), so the job cannot finish its work: only the
soft time limit can end it. Celery raises ``SoftTimeLimitExceeded`` where
the task is; the app must let it through every catch-all, save a final
state and leave. One that swallows it goes on until the hard limit kills
the process, and the job stays unfinished. The global invariants judge.
"""
import pytest

SOFT_LIMIT_VAR, HARD_LIMIT_VAR = $SOFT_LIMIT_VAR, $HARD_LIMIT_VAR  # found in [tool.jobquake.env]
HARD_LIMIT = $HARD_LIMIT_S
# $SWEEPER_WHY: stopped, so it cannot send a killed job again and hide it
SWEEPER = $SWEEPER
SLACK = 5.0  # seconds after the hard limit: the task may start late on a busy machine


# every paid call is held before it is sent: the provider never sees one
@pytest.mark.jobquake(settle=False, expect_paid_calls=0)  # settled below, while every paid call is still held
def test_a_job_past_its_soft_limit_ends_before_the_hard_limit(jq, app):
    if HARD_LIMIT_VAR is None:
        pytest.skip("TODO(jobquake init): set HARD_LIMIT_VAR and HARD_LIMIT in scenarios/test_soft_limit.py")
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    jq.faults.failpoint("http.before_paid_call", "hang")  # every paid call waits here until healed
    app.submit_job(1)
    # settled here, just past the hard limit, with the calls still held: healing would let them go,
    # and a job the soft limit failed to end would then finish and hide it
    jq.settle(timeout=float(HARD_LIMIT) + SLACK)
'''

FILES = {
    "conftest.py": CONFTEST,
    "test_kill_worker.py": KILL,
    "test_hang.py": HANG,
    "test_pool_exhaustion.py": POOL,
    "test_sweep.py": SWEEP,
    "test_soft_limit.py": SOFT,
}


def render(name: str, values: dict[str, str]) -> str:
    """File ``name`` with its ``$NAME`` placeholders filled."""
    return render_text(FILES[name], values)


def render_text(text: str, values: dict[str, str]) -> str:
    """A template's text with its ``$NAME`` placeholders filled."""
    return Template(text).substitute({"TODO": "TODO(jobquake init)", **values})
