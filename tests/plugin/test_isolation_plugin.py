"""Tests kept apart, end to end: work one test leaves behind never runs in the next one."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

TINYAPP_DIR = Path(__file__).parent.parent / "tinyapp"
SCENARIOS = '''
import httpx
import psycopg
import pytest
from celery import Celery
from harness import wait_until

def submit(jq, job_id, state="queued", countdown=None):
    with psycopg.connect(jq.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (id, state) VALUES (%s, %s)", (job_id, state))
    jq.record.submission(job_id, status=202)
    Celery(broker=jq.redis_url).send_task("tiny.work", args=[job_id], countdown=countdown)

def held(jq):
    with jq.stack.redis.client() as client:
        return client.hlen("unacked")

@pytest.mark.jobquake(settle=False, expect_paid_calls=0)  # leaves its scheduled task behind on purpose
def test_a_leaves_a_scheduled_task(jq):
    submit(jq, "a-1", state="done", countdown=1.5)
    wait_until(lambda: held(jq), timeout=10, what="the worker holding a-1's task")

def test_b_never_runs_it(jq):
    # b-1 is due after a-1 would have been: once b-1 is done, a-1 would have run before it
    submit(jq, "b-1", countdown=2.0)
    wait_until(lambda: [c["job_id"] for c in jq.paidapi.billed()], timeout=20, what="b-1 billed")
    assert [c["job_id"] for c in jq.paidapi.ledger()] == ["b-1"]

def test_c_sees_a_leak(jq):
    # what a leak that got through would look like: a paid call for test A's job
    httpx.post(jq.values["paidapi_direct_url"] + "/v1/generate", json={"prompt": "a-1"}, timeout=10,
               headers={"X-Job-Id": "a-1", "X-Step": "label"})
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(tinyapp=(TINYAPP_DIR / "tinyapp.py").read_text(), test_scenarios=SCENARIOS)
    pytester.makefile(".toml", pyproject=(TINYAPP_DIR / "pyproject.toml").read_text())
    return pytester


def test_a_message_left_by_one_test_never_reaches_the_next(project: pytest.Pytester):
    result = project.runpytest_subprocess("--jobquake-seed=3", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    artifacts = project.path / ".jobquake" / "artifacts" / "latest"  # the session's own folder

    # after A's verdict its worker, which held the scheduled task, was stopped and the broker purged
    events = [json.loads(line) for line in
              (next(artifacts.glob("*test_a_leaves*")) / "history.jsonl").read_text().splitlines()]
    [isolated] = [e for e in events if e["name"] == "isolate"]
    assert isolated["data"]["stopped"] == ["worker1"] and isolated["data"]["remaining"] == []
    assert any(item["kind"] == "scheduled delivery" for item in isolated["data"]["left"])

    # C is told what leaked and from where; A, which the work came from, fails for it too
    out = result.stdout.str()
    assert "no_work_from_earlier_tests" in out and "leaked from test_scenarios.py::test_a_leaves" in out
    run = json.loads((artifacts / "run.json").read_text())
    verdicts = {nodeid.split("::")[-1]: verdict for nodeid, verdict in run["tests"].items()}
    assert verdicts["test_a_leaves_a_scheduled_task"]["valid"] is False
    assert verdicts["test_b_never_runs_it"]["valid"] is True
