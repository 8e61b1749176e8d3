"""The scenario ``jobquake init`` writes for Django projects only (with the five headline ones)."""
from __future__ import annotations

COMMIT_RACE = '''"""A slow commit: a job's task must not run before its row can be seen.

The framework failpoint ``django.before_commit`` holds the submitting
process just before its transaction commits: the job's row is written and
visible to nobody else yet. An app that queues the job inside the
transaction has published it already: a worker takes it now, finds no row
(or an old one) and leaves, and the job is never run. An app that queues
it in ``transaction.on_commit`` publishes nothing until the commit. The
global invariants judge: every job terminal, no accepted submission lost.
"""
import pytest

# $SWEEPER_WHY: stopped, so it cannot send a lost job again and hide it
SWEEPER = $SWEEPER
RUN_WITHIN = 30.0  # seconds a worker may take, on a busy machine, to run a task published before the commit
SUBMITTED_WITHIN = 60.0  # seconds a submission may take on a busy machine (a process of its own)
MARGIN = 10.0


@pytest.mark.jobquake(settle=False)  # settled below
def test_a_job_is_not_run_before_its_row_is_committed(jq, app):
    if SWEEPER:
        jq.faults.stop_service(SWEEPER)
    commit = jq.faults.failpoint("django.before_commit", "hang", match=app.submitter_match(), once=True)
    # these two watch (their action changes nothing): a publish by the submitting process, a task run
    published = jq.failpoints.arm("celery.before_publish", "return", match=app.submitter_match())
    ran = jq.failpoints.arm("celery.task_postrun", "return")
    submitted = app.submit_job_later(1)
    commit.wait(timeout=SUBMITTED_WITHIN)  # the job's transaction is held just before its commit
    if published.triggers():  # its task went out inside the transaction: let it run before the commit
        ran.wait(timeout=RUN_WITHIN)
    commit.heal()
    submitted.result(timeout=SUBMITTED_WITHIN)
    jq.settle(timeout=MARGIN)  # then the invariants judge
'''

DRF_ADAPTER = '''"""How the scenarios submit a job: through the app's own view, as a POST would. Written by `jobquake init`.

$VIEW saves a new job through $SERIALIZER and queues its task.
submit() calls that view with a request built by Django REST framework's
APIRequestFactory, so each job goes through the app's own validation, save
and enqueue. A view that needs an authenticated user needs one here too
(``rest_framework.test.force_authenticate(request, user)``).
"""
$IMPORTS
from $MODULE import $NAME

PATH = $PATH  # $PATH_WHY
ID_KEY = $ID_KEY  # $ID_WHY


def submit(**job) -> str:
    """POST ``job`` (what conftest.py's job_args gives) to the view; the new job's id, from its response."""
    request = APIRequestFactory().post(PATH, job, format="json")
    $CALL
    if response.status_code >= 400:  # refused: the scenario records a refused submission
        raise RuntimeError(f"$NAME answered {response.status_code}: {response.data}")
    if ID_KEY is None:
        raise NotImplementedError(f"$TODO: ID_KEY in scenarios/submit_adapter.py, the key of the new "
                                  f"job's id in the view's response: {response.data}")
    return str(response.data[ID_KEY])
'''
