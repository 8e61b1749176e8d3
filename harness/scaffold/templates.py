"""The scenario files ``jobquake init`` writes; ``$NAME`` is filled from the scan (``values``).

Each is written to be read first and edited: the inferred values are
constants at the top with where they came from; a scenario whose value
could not be inferred skips with the exact constant to fill in.
"""
from __future__ import annotations

import json
from string import Template
from typing import Any

PYTEST_SECTION = """
# pytest takes this folder as its root, so jobquake reads the [tool.jobquake] above
[tool.pytest.ini_options]
"""
TODO = "TODO(jobquake init)"
NO_SWEEP = "no sweep process found: a job whose worker dies stays where it is; test_kill_worker.py shows it"

CONFTEST = '''"""This project as its scenarios see it: how a job is submitted. Written by `jobquake init`."""
import pytest

from harness.appclient import AppClient

# $SUBMIT_WHY; it runs in a process of its own,
# with the app's environment, as it would in production
SUBMIT = $SUBMIT
# $SESSION_WHY
SESSION = $SESSION


def job_args(n: int) -> dict:
    """The arguments of job number ``n`` (each job a little different)."""
    return $JOB_ARGS


@pytest.fixture
def app(jq):
    """Submit jobs (recorded in the run's history), read their rows, wait for their states."""
    if SUBMIT is None:
        pytest.skip("TODO(jobquake init): set SUBMIT in scenarios/conftest.py")
    client = AppClient(jq, submit=SUBMIT, job_args=job_args, session=SESSION)
    yield client
    client.close()
'''

KILL = '''"""A worker is killed while it waits on the model: the job must still end, and be billed once.

The first paid call is held at the provider; the worker whose process
holds it is SIGKILLed at once, by the harness, as soon as the call is held
(main process and pool children: no handler runs, nothing is
acknowledged); the provider then answers and bills the call its client
will never read; a fresh worker starts. The job's message must come back
from the broker (late acks; with Redis, after its visibility timeout, at
the next restore sweep: settle_timeout allows for both), the next attempt
must reuse the call's idempotency key (the provider replays instead of
billing again), and the job must end. The global invariants judge: every
job terminal, no paid call billed twice, no accepted submission lost.
"""
import pytest

from harness.faults import InFlight

# $SWEEPER_WHY: stopped, so the broker's redelivery is tested alone
SWEEPER = $SWEEPER
SUBMITTED_WITHIN = 60.0  # seconds a submission may take on a busy machine (a process of its own)


@pytest.mark.jobquake(settle=False)  # settled below, within settle_timeout
def test_a_job_whose_worker_dies_mid_call_still_ends_and_is_billed_once(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    kill = jq.faults.kill_worker(when=InFlight())  # the worker holding the next paid call, while it waits
    submitted = app.submit_job_later(1)
    # the kill's record (a failed submission, or calls the fake refused, are named instead)
    killed = app.held_call(kill, submitted, timeout=SUBMITTED_WITHIN)
    job_id = killed.get("job_id")
    if job_id is not None and app.job(job_id)["state"] in jq.config.terminal_states:
        pytest.fail("the job ended before the kill landed (its call's deadline passed first): nothing was "
                    "tested; a longer deadline in [tool.jobquake.env] gives the kill more room")
    kill.heal()  # a fresh worker in the dead one's place
    submitted.result(timeout=SUBMITTED_WITHIN)  # the submission is on record
    jq.settle()  # then the invariants judge (every_job_terminal names a job that is stuck, and how)
'''

HANG = '''"""The model provider accepts a call and never answers: the job must end at the call's deadline.

Nothing but a deadline ends such a wait. ``deadline_honoured`` measures,
per job, from the start of its last paid call (the provider's ledger) to
the job's end (the database): it must be the call's deadline, give or take
``SLACK``. The deadline is the app's setting for it (``DEADLINE_VAR``,
when init found one), else the timeout the call's own client sent, which
the ledger records (a ``timeout=`` in the code, a client's default,
scaled like every duration). A call sent without any timeout has no
deadline: that is what the check then reports.
"""
import pytest

# $DEADLINE_WHY
DEADLINE_VAR = $DEADLINE_VAR
DEADLINE = $DEADLINE_S
SLACK = 0.5  # of the deadline: the work between giving up and saving the outcome, on a busy machine
WAIT_AT_MOST = 60.0  # seconds: a job whose calls have no deadline never ends while they hang
CHECK = {"deadline_honoured": {"deadline": None if DEADLINE is None else float(DEADLINE), "slack_ratio": SLACK}}


@pytest.mark.jobquake(checks=["deadline_honoured"], options=CHECK)
def test_a_call_that_is_never_answered_ends_its_job_at_the_deadline(jq, app):
    if DEADLINE_VAR is not None:
        assert float(jq.config.env[DEADLINE_VAR]) == float(DEADLINE), "the check's options assume this deadline"
    jq.faults.hang_endpoint(layer="provider")  # every call from now on: accepted, never answered
    job_id = app.submit_job(1)
    app.wait_for_end(job_id, timeout=WAIT_AT_MOST)  # or not: the check says which deadline was missed
'''

POOL = '''"""The database pool runs dry between the job's write and its enqueue: the job must still run.

The framework failpoint ``$POOL_AT`` fires in the process
that submits, right after the job's transaction commits; its action empties
that process's $POOL_KIND pool (every connection held by the harness). An
app that queues the job in a second step, needing the database again,
times out there: the job is saved and never run. An app that queues it
without the database again (or writes it with its message: an outbox) has
nothing left to do; it may still tell its caller the pool ran dry, and
that is fine: the submission is then recorded as refused after its row was
written, and the row is judged like any other. A first job, submitted
before the fault, makes sure there is an accepted submission to follow.
The global invariants judge: no accepted submission lost, every job
terminal.
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
    app.submit_job(1)  # before the fault: an accepted submission to follow
    dry = jq.faults.exhaust_pool(at="$POOL_AT", match=$POOL_MATCH,
                                 timeout=HOLD_AT_MOST)
    app.try_submit_job(2)  # recorded either way: accepted, or refused after (or before) its row was written
    dry.wait(timeout=MARGIN)  # the pool really was emptied, in the submitting process
    dry.heal()
    jq.settle()  # then the invariants judge
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


# it submits nothing (the rows are written as the sweep finds them): no submission to follow
@pytest.mark.jobquake(settle=False, skip_checks=["no_lost_submission"])  # settled below, before the poison row is healed away
def test_a_poison_row_does_not_stop_the_sweep(jq, app):
    if not STALE_JOB or not POISON:
        pytest.skip("TODO(jobquake init): fill STALE_JOB and POISON in scenarios/test_sweep.py")
    good = [app.insert_job(STALE_JOB) for _ in range(GOOD_ROWS // 2)]
    # found again (and removed at heal) by the poison columns alone
    jq.faults.poison_row(jq.config.job_table, values=app.row_values({**STALE_JOB, **POISON}), key=list(POISON))
    good += [app.insert_job(STALE_JOB) for _ in range(GOOD_ROWS - len(good))]
    # settled here, with the poison row in place: healing deletes it, and a sweep without per-row
    # isolation would then recover and hide itself
    jq.settle()
'''

SOFT = '''"""A job outlasts its soft time limit: it must end, and before the hard limit kills it.

Every paid call is held before it is sent (framework failpoint
``http.before_paid_call``), so the job cannot finish its work: only the
soft time limit can end it. Celery raises ``SoftTimeLimitExceeded`` where
the task is; the app must let it through every catch-all, save a final
state and leave. One that swallows it goes on until the hard limit kills
the process, and the job stays unfinished. The limits are the ones the
task runs with (its decorator, the app's settings, the worker's flags, as
scaled for the run), read from the task's start. The global invariants
judge.
"""
import pytest

# $SWEEPER_WHY: stopped, so it cannot send a killed job again and hide it
SWEEPER = $SWEEPER
SLACK = 5.0  # seconds after the hard limit: the task may start late on a busy machine
STARTED_WITHIN = 60.0  # seconds until the task starts on a busy machine


# every paid call is held before it is sent: the provider never sees one
@pytest.mark.jobquake(settle=False, expect_paid_calls=0)  # settled below, while every paid call is still held
def test_a_job_past_its_soft_limit_ends_before_the_hard_limit(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    jq.faults.failpoint("http.before_paid_call", "hang")  # every paid call waits here until healed
    job_id = app.submit_job(1)
    limits = app.task_limits(job_id, timeout=STARTED_WITHIN)  # what the task runs with
    if limits["soft_time_limit"] is None:
        pytest.skip(f"task {limits['task']} runs with no soft time limit: nothing ends a job whose calls hang "
                    f"but the call's own deadline (test_hang.py)")
    bound = limits["time_limit"] or 2 * limits["soft_time_limit"]
    # settled here, just past the hard limit, with the calls still held: healing would let them go,
    # and a job the soft limit failed to end would then finish and hide it
    jq.settle(timeout=float(bound) + SLACK)
'''

ADAPTER = '''"""How the scenarios submit a job to this app. Written by `jobquake init`: edit it.

The only code that saves a new job is the web handler $HANDLER,
which needs a request the scenarios cannot build. Do here what it does
with one: call the same code with plain values, and return the new job's id.
"""


def submit(**job) -> str:
    """Save a new job from ``job`` (what conftest.py's job_args gives) and queue it; its id."""
    # $TODO: call what $HANDLER calls, with the values of ``job``
    raise NotImplementedError("$TODO: scenarios/submit_adapter.py submit() saves and queues a job")
'''

SKIPPED = '''"""$TITLE

Not tested in this app: $REASON.
Written by `jobquake init`; when the app changes, delete this file and run
`jobquake init` again, or write the scenario yourself.
"""
import pytest

pytestmark = pytest.mark.skip(reason=$REASON_TEXT)


def test_not_applicable():
    """Skipped: see the reason above."""
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
    if name == "test_sweep.py" and values["SWEEPER"] == "None":
        return skipped("A poison row in the sweep: one row the sweep cannot handle must not stop the others.",
                       NO_SWEEP)
    return render_text(FILES[name], values)


def render_text(text: str, values: dict[str, str]) -> str:
    """A template's text with its ``$NAME`` placeholders filled."""
    return Template(text).substitute({"TODO": TODO, **values})


def skipped(title: str, reason: str) -> str:
    """A scenario that does not apply to this app: a skip that says why (no stack is started for it)."""
    return Template(SKIPPED).substitute(TITLE=title, REASON=reason, REASON_TEXT=json.dumps(reason))


def adapter(submit: Any) -> str:
    """The adapter init writes when only a web handler takes a new job."""
    fn = submit.function
    return Template(ADAPTER).substitute(TODO=TODO, HANDLER=f"{fn.module}.{fn.name}")


def values(found: Any, submit: Any, env: list, session: str | None, todos: list[str]) -> dict[str, str]:
    """Every ``$NAME`` of the templates, from the findings."""
    from harness.scaffold import roles

    fn = submit.function
    spec = "scenarios.submit_adapter:submit" if submit.adapter else (f"{fn.module}:{fn.name}" if fn else None)
    args = "{\n" + "\n".join(f"        {line}" for line in submit.args) + "\n    }" if submit.args else "{}"
    if submit.adapter and not submit.args:
        args = "{}  # " + TODO + ": what scenarios/submit_adapter.py needs for job number n"
        todos.append("scenarios/conftest.py job_args: what the adapter needs for job number n")
    # the app's setting for the deadline, where it is the only one: literal timeouts in calls are other
    # deadlines (each call's own, from the ledger, judges those)
    setting = next((e for e in env if roles.deadline(e.name) and e.kind == "duration"), None)
    deadline = None if found.paid_timeouts else setting
    sweeper = _sweeper(found)
    out = {"SUBMIT": json.dumps(spec) if spec else "None", "SUBMIT_WHY": submit.why,
           "SESSION": json.dumps(session) if session else "None", "JOB_ARGS": args,
           "SESSION_WHY": (f"found: {session} makes the app's database sessions: the submit function takes one"
                           if session else "the submit function takes no database session"),
           "SWEEPER": json.dumps(sweeper) if sweeper else "None",
           "SWEEPER_WHY": (f"found: {sweeper}, the process that finds jobs nobody works on" if sweeper
                           else "no sweeper process found: nothing to stop"),
           "DEADLINE_VAR": json.dumps(deadline.name) if deadline else "None",
           "DEADLINE_S": f"{float(deadline.value):g}" if deadline else "None",
           "DEADLINE_WHY": (f"found: {deadline.name}, the model call's deadline, in this run's seconds "
                            "([tool.jobquake.env])" if deadline else
                            f"found {setting.name}, but the code's calls also set timeouts of their own: each "
                            "call's own timeout is used" if setting else
                            "no variable looked like the model call's deadline: each call's own timeout is used")}
    out.update({"POOL_AT": "sqlalchemy.after_commit", "POOL_KIND": "SQLAlchemy", "STALE_JOB": "{}",
                "POOL_MATCH": "app.submitter_match()"})
    out.update(found.scenario_values)  # a framework's reader fills some (Django: its failpoint at the commit)
    if sweeper:  # without one, test_sweep.py is a skip saying so
        todos.append("scenarios/test_sweep.py STALE_JOB, POISON: a row your sweep picks up, and what makes one "
                     "poison (that scenario skips until they are set)")
    return out


def _sweeper(found: Any) -> str | None:
    if "beat" in found.commands:
        return "beat"
    return next((m.rsplit(".", 1)[-1] for m in sorted(found.processes) if "sweep" in m or "reap" in m), None)
