"""The instrumentation in a real Python process: tags, attempts, ``job_id_from``, loading and chaining.

Each test starts ``instrument_child.py`` the way the harness starts an app
process (``PYTHONPATH`` led by the boot folder, the instrumentation's
variables set); Celery runs its tasks eagerly, which sends the same
signals a worker sends.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness._ports import free_port
from harness.instrument import LOADED_MARKER
from harness.instrument.control import InstrumentControl
from harness.instrument.jobid import check

pytestmark = pytest.mark.integration

CHILD = Path(__file__).with_name("instrument_child.py")


def run_child(tmp_path: Path, *calls: str, job_id_from: str = "args[0]", instrument: bool = True,
              extra_path: str = "") -> tuple[dict, str, InstrumentControl]:
    control = InstrumentControl.create(tmp_path / "instrument")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBQUAKE_")}
    env["CHILD_PORT"] = str(free_port())
    if instrument:
        # the outside call goes to /v1/outside of the same server: the prefix is the paid API's route
        env.update(control.env(paidapi_url=f"http://127.0.0.1:{env['CHILD_PORT']}/v1/generate",
                               job_id_from=job_id_from, pythonpath=os.pathsep.join(filter(None, [
                                   extra_path, str(CHILD.parent)]))))
    else:
        env["PYTHONPATH"] = str(CHILD.parent)
    done = subprocess.run([sys.executable, str(CHILD), *calls], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr, control


@pytest.mark.parametrize("client", ["httpx", "async_httpx", "requests", "aiohttp"])
def test_a_paid_call_carries_job_attempt_and_pid(tmp_path, client):
    out, stderr, _ = run_child(tmp_path, client)
    assert LOADED_MARKER in stderr
    tagged, outside = out["seen"]
    # the read timeout each library's default gives the call: httpx 5 s, aiohttp 300 s, requests none
    timeout = {"httpx": "5", "async_httpx": "5", "requests": "none", "aiohttp": "300"}[client]
    assert tagged == {"path": "/v1/generate", "x-job-id": "item-1", "x-attempt": "1",
                      "x-caller-pid": str(out["pid"]), "x-jobquake-timeout": timeout}
    assert outside == {"path": "/v1/outside"}  # not a paid call: untouched


def test_each_run_of_a_task_for_a_job_is_the_next_attempt(tmp_path):
    out, _, control = run_child(tmp_path, "httpx@a", "requests@b", "httpx@a")
    assert [(s["x-job-id"], s["x-attempt"]) for s in out["seen"][:3]] == [("a", "1"), ("b", "1"), ("a", "2")]
    runs = [(r["type"], r["job_id"], r["attempt"]) for r in control.records()]
    assert runs == [("invoke", "a", 1), ("ok", "a", 1), ("invoke", "b", 1), ("ok", "b", 1),
                    ("invoke", "a", 2), ("ok", "a", 2)]


@pytest.mark.parametrize("expression, job_id", [
    ("item_id", "item-1"),  # a parameter, passed positionally
    ("instrument_jobids:job_of", "called-item-1"),
    ("", None),  # the Celery task id: some uuid
])
def test_job_id_from_forms(tmp_path, expression, job_id):
    out, _, _ = run_child(tmp_path, "httpx", job_id_from=expression)
    found = out["seen"][0]["x-job-id"]
    assert found == job_id if job_id else len(found) == 36


def test_a_job_id_from_that_does_not_resolve_is_a_named_error_and_an_event(tmp_path):
    out, stderr, control = run_child(tmp_path, "httpx", job_id_from="args[3]")
    assert ("job_id_from = 'args[3]' does not resolve for task child.work" in stderr
            and "got 2 positional argument(s)" in stderr)
    [error] = control.errors()
    assert (error["name"], error["data"]["task"], error["data"]["expression"]) == ("job_id_from", "child.work",
                                                                                   "args[3]")
    assert "x-job-id" not in out["seen"][0] and out["seen"][0]["x-caller-pid"] == str(out["pid"])


def test_headers_the_app_sets_itself_win(tmp_path):
    out, _, _ = run_child(tmp_path, "own_header")
    assert out["seen"][0]["x-job-id"] == "mine" and out["seen"][0]["x-attempt"] == "1"


def test_without_its_variables_nothing_loads(tmp_path):
    out, stderr, _ = run_child(tmp_path, "httpx", instrument=False)
    assert LOADED_MARKER not in stderr and out["seen"][0] == {"path": "/v1/generate"}


def test_the_apps_own_sitecustomize_still_runs(tmp_path):
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.write(2, b'own sitecustomize ran\\n')\n")
    _, stderr, _ = run_child(tmp_path, "httpx", extra_path=str(own))
    assert LOADED_MARKER in stderr and "own sitecustomize ran" in stderr


@pytest.mark.parametrize("expression", ["args[0]", "item_id", "pkg.mod:fn", ""])
def test_job_id_from_well_formed(expression):
    assert check(expression) is None


@pytest.mark.parametrize("expression", ["args[x]", "args[0].id", "mod:", "kwargs['a']"])
def test_job_id_from_malformed(expression):
    assert "is none of" in check(expression)


SQLALCHEMY_APP = """
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

engine = create_engine("sqlite:///app.db")
with engine.begin() as conn:                      # core: commits
    conn.execute(text("CREATE TABLE t (a int)"))
with Session(engine) as session:                  # ORM: commits
    session.execute(text("INSERT INTO t VALUES (1)"))
    session.commit()
with engine.connect() as conn:                    # reads, never commits
    conn.execute(text("SELECT a FROM t")).all()
"""


def test_after_commit_fires_once_per_committed_connection_back_in_its_pool(tmp_path):
    from harness.failpoints.control import FailpointControl

    failpoints = FailpointControl.create(tmp_path / "failpoints")
    failpoints.arm("sqlalchemy.after_commit", "return", value=None)
    failpoints.arm("sqlalchemy.pool_checkout", "return", value=None)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JOBQUAKE_")}
    env.update(failpoints.env())
    env.update(InstrumentControl.create(tmp_path / "instrument").env(paidapi_url="", job_id_from=""))
    done = subprocess.run([sys.executable, "-c", SQLALCHEMY_APP], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    commits = failpoints.triggers("sqlalchemy.after_commit")
    assert [t["context"]["engine"] for t in commits] == ["sqlite:///app.db"] * 2
    assert len(failpoints.triggers("sqlalchemy.pool_checkout")) == 3
