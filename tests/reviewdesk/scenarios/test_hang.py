"""The model provider accepts a call and never answers: the job must end at the call's deadline.

Nothing but the app's own deadline on the call ends such a wait. The
``deadline_honoured`` check measures, per job, from the start of its last
paid call (the provider's ledger) to the job's end (the database): it must
be the configured deadline, give or take ``SLACK``.
"""
import pytest

# found: the model call's deadline, in this run's seconds ([tool.jobquake.env])
DEADLINE_VAR = "REVIEW_MODEL_TIMEOUT_S"
DEADLINE = 1.2
SLACK = 0.5  # of the deadline: the work between giving up and saving the outcome, on a busy machine
CHECK = {"deadline_honoured": {"deadline": float(DEADLINE or 0), "slack": float(DEADLINE or 0) * SLACK}}


# added by hand after `jobquake init`: the bug of this app it catches
@pytest.mark.catches("no-model-timeout", invariant="deadline_honoured")
@pytest.mark.jobquake(checks=["deadline_honoured"], options=CHECK)
def test_a_call_that_is_never_answered_ends_its_job_at_the_deadline(jq, app):
    if DEADLINE_VAR is None:
        pytest.skip("TODO(jobquake init): set DEADLINE_VAR and DEADLINE in scenarios/test_hang.py")
    assert float(jq.config.env[DEADLINE_VAR]) == float(DEADLINE), "the check's options assume this deadline"
    jq.faults.hang_endpoint(layer="provider")  # every call from now on: accepted, never answered
    job_id = app.submit_job(1)
    app.wait_for(job_id, timeout=10 * float(DEADLINE) + 5)
