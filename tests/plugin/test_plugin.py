"""The plugin end to end, in a pytester project pointing jobquake at a small Celery app."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

TINYAPP_DIR = Path(__file__).parent.parent / "tinyapp"
TINYAPP = (TINYAPP_DIR / "tinyapp.py").read_text()
PYPROJECT = (TINYAPP_DIR / "pyproject.toml").read_text()
SCENARIOS = '''
import psycopg
from celery import Celery
from harness import wait_until

def submit(jq, job_id, finish=True):
    with psycopg.connect(jq.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (id, state) VALUES (%s, 'queued')", (job_id,))
    jq.record.submission(job_id, status=202)
    Celery(broker=jq.redis_url).send_task("tiny.work", args=[job_id, finish])

def state(jq, job_id):
    with psycopg.connect(jq.database_dsn, autocommit=True) as conn:
        return conn.execute("SELECT state FROM jobs WHERE id = %s", (job_id,)).fetchone()[0]

def test_job_reaches_done(jq):
    submit(jq, "job-1")
    wait_until(lambda: state(jq, "job-1") == "done", timeout=20, what="job-1 done")
    assert [c["job_id"] for c in jq.paidapi.billed()] == ["job-1"]

def test_job_left_processing(jq):
    submit(jq, "job-2", finish=False)
    wait_until(lambda: state(jq, "job-2") == "processing", timeout=20, what="job-2 processing")
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(tinyapp=TINYAPP, test_scenarios=SCENARIOS)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    return pytester


def test_options_are_registered(pytester: pytest.Pytester):
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*jobquake*", "*--jobquake-backend*", "*--jobquake-seed*",
                                 "*--jobquake-time-scale*", "*--jobquake-artifacts*"])


def test_bad_config_is_a_clear_usage_error(pytester: pytest.Pytester):
    pytester.makefile(".toml", pyproject="[tool.jobquake]\nworkres = 2\n")
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*unknown key 'workres'*pyproject.toml*"])


def test_scenarios_pass_fail_and_leave_evidence(project: pytest.Pytester):
    result = project.runpytest_subprocess("--jobquake-seed=7", "-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    # the failure names the invariant, the stuck job, the artifacts and the replay line
    assert "every job terminal" in out.lower() or "every_job_terminal" in out
    assert "job-2" in out and "processing" in out
    assert "--jobquake-seed=7" in out
    assert "harness/session.py" not in out  # the verdict, not the plugin's frames
    result.stdout.fnmatch_lines(["*jobquake invariants*"])
    artifacts = project.path / ".jobquake" / "artifacts" / "latest"  # the session's own folder
    done = next(artifacts.glob("*test_job_reaches_done*"))
    for name in ("history.jsonl", "snapshot.json", "verdict.json", "timeline.html"):
        assert (done / name).is_file(), name
    for log in ("redis", "postgres", "sqs", "paidapi", "proxy", "worker1", "zygote"):
        assert (done / "logs" / f"{log}.log").is_file(), log
    events = [json.loads(line) for line in (done / "history.jsonl").read_text().splitlines()]
    states = [e["data"]["state"] for e in events if e["source"] == "job" and e["name"] == "state"]
    assert states == ["queued", "processing", "done"]
    assert any(e["source"] == "paidapi" and e["type"] == "ok" for e in events)
    verdict = json.loads((done / "verdict.json").read_text())
    assert verdict["valid"] is True
    stuck = json.loads((next(artifacts.glob("*test_job_left_processing*")) / "verdict.json").read_text())
    assert stuck["valid"] is False
    # CI dashboards see each invariant as a JUnit property of its test
    junit = (project.path / "junit.xml").read_text()
    assert 'name="jobquake.every_job_terminal" value="invalid"' in junit
    assert 'name="jobquake.seed" value="7"' in junit
    run = json.loads((artifacts / "run.json").read_text())
    assert run["summary"] == {"tests": 2, "valid": 1, "invalid": 1, "unknown": 0}


NOTHING_DONE = """
def test_makes_nothing(jq):
    pass
"""


def test_a_scenario_without_evidence_fails_as_unknown_unless_told_to_warn(pytester: pytest.Pytester):
    pytester.makepyfile(tinyapp=TINYAPP, test_nothing=NOTHING_DONE)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--jobquake-workers=1")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "every_job_terminal [unknown]: no job was recorded" in out
    assert "no_double_billing [unknown]: no paid call was made: the ledger is empty" in out
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--jobquake-workers=1",
                                           "--jobquake-on-unknown=warn")
    result.assert_outcomes(passed=1, warnings=3)
    assert "UnknownVerdictWarning" in result.stdout.str()


def test_under_xdist_the_table_and_one_run_json_are_those_of_a_serial_run(project: pytest.Pytester):
    result = project.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider", "--jobquake-workers=1")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*jobquake invariants*", "*test_job_reaches_done*", "*test_job_left_processing*"])
    artifacts = project.path / ".jobquake" / "artifacts" / "latest"  # the session's own folder
    assert not list(artifacts.glob("run-gw*.json"))
    run = json.loads((artifacts / "run.json").read_text())
    assert run["summary"] == {"tests": 2, "valid": 1, "invalid": 1, "unknown": 0}



SKIPPED = SCENARIOS + '''
import pytest

def test_skipped_mid_run(jq):
    submit(jq, "job-s", finish=False)  # a job held on purpose, as a scenario does before it finds it cannot go on
    wait_until(lambda: state(jq, "job-s") == "processing", timeout=20, what="job-s processing")
    pytest.skip("the app has no soft time limit")

def test_xfailed_mid_run(jq):
    submit(jq, "job-x", finish=False)
    wait_until(lambda: state(jq, "job-x") == "processing", timeout=20, what="job-x processing")
    pytest.xfail("a known gap")

def test_after_them(jq):
    submit(jq, "job-a")
    wait_until(lambda: state(jq, "job-a") == "done", timeout=20, what="job-a done")
'''


def test_a_skipped_scenario_is_not_judged_and_its_work_does_not_reach_the_next(pytester: pytest.Pytester):
    pytester.makepyfile(tinyapp=TINYAPP, test_skipped=SKIPPED)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--junitxml=junit.xml",
                                           "-k", "mid_run or after_them")
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    out = result.stdout.str()
    assert "1 scenario(s): 1 valid, 0 invalid, 0 unknown" in out
    assert "test_skipped_mid_run" not in out.split("jobquake invariants")[1]
    artifacts = pytester.path / ".jobquake" / "artifacts" / "latest"
    run = json.loads((artifacts / "run.json").read_text())
    assert list(run["tests"]) == ["test_skipped.py::test_after_them"]
    assert run["summary"] == {"tests": 1, "valid": 1, "invalid": 0, "unknown": 0}
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count('name="jobquake.verdict" value="skipped"') == 2
    assert junit.count('name="jobquake.every_job_terminal"') == 1  # the test that ran to its end only
