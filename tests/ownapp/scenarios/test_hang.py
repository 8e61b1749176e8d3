"""The model provider accepts a call and never answers: the job must end at the call's deadline.

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

# found: TICKETS_MODEL_TIMEOUT_S, the model call's deadline, in this run's seconds ([tool.jobquake.env])
DEADLINE_VAR = "TICKETS_MODEL_TIMEOUT_S"
DEADLINE = 2
SLACK = 0.5  # of the deadline: the work between giving up and saving the outcome, on a busy machine
WAIT_AT_MOST = 60.0  # seconds: a job whose calls have no deadline never ends while they hang
CHECK = {"deadline_honoured": {"deadline": None if DEADLINE is None else float(DEADLINE), "slack_ratio": SLACK}}


# added by hand after `jobquake init`: the bug of this app it catches
@pytest.mark.catches("no-model-timeout", invariant="deadline_honoured")
@pytest.mark.jobquake(checks=["deadline_honoured"], options=CHECK)
def test_a_call_that_is_never_answered_ends_its_job_at_the_deadline(jq, app):
    if DEADLINE_VAR is not None:
        assert float(jq.config.env[DEADLINE_VAR]) == float(DEADLINE), "the check's options assume this deadline"
    jq.faults.hang_endpoint(layer="provider")  # every call from now on: accepted, never answered
    job_id = app.submit_job(1)
    app.wait_for_end(job_id, timeout=WAIT_AT_MOST)  # or not: the check says which deadline was missed
