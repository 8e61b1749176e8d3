"""Two sessions in one checkout at once keep their evidence apart; ``latest`` names the newest.

Before, both wrote ``.jobquake/artifacts/<test>/``: one session's verdict
sat next to the other's history, one deleted the other's history when its
test began, and ``run.json`` was whoever wrote last.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from harness.cli import main as jobquake
from tests.plugin.test_plugin import PYPROJECT, TINYAPP

pytestmark = pytest.mark.integration

# each session's scenario waits (bounded) until the other's has begun too: their tests overlap
SCENARIO = '''
import os, pathlib, time
import psycopg
from celery import Celery
from harness import wait_until

def test_same_name_in_both(jq):
    here = pathlib.Path(os.environ["MEET_DIR"])
    (here / f"begun-{os.getpid()}").touch()
    wait_until(lambda: len(list(here.glob("begun-*"))) == 2, timeout=60, what="the other session's test")
    with psycopg.connect(jq.database_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO jobs (id, state) VALUES (%s, 'queued')", (f"job-{os.getpid()}",))
    jq.record.submission(f"job-{os.getpid()}", status=202)
    Celery(broker=jq.redis_url).send_task("tiny.work", args=[f"job-{os.getpid()}", True])
    wait_until(lambda: len(jq.paidapi.billed()) == 1, timeout=30, what="the job's paid call")
'''


def test_two_sessions_at_once_keep_separate_artifacts_and_report_finds_the_newest(pytester: pytest.Pytester,
                                                                                     capsys):
    pytester.makepyfile(tinyapp=TINYAPP, test_both=SCENARIO)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    env = {**os.environ, "MEET_DIR": str(pytester.path)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--jobquake-workers=1"]
    sessions = [subprocess.Popen(command, cwd=pytester.path, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outputs = [proc.communicate(timeout=300)[0] for proc in sessions]
    assert [proc.returncode for proc in sessions] == [0, 0], "\n".join(outputs)
    root = pytester.path / ".jobquake" / "artifacts"
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    # one folder per session, named <began>-<pid>: which began first (and sorts first) is the scheduler's choice
    assert sorted(p.name.rsplit("-", 1)[1] for p in folders) == sorted(str(proc.pid) for proc in sessions)
    for folder in folders:
        pid = folder.name.rsplit("-", 1)[1]
        (test,) = [p for p in folder.iterdir() if p.is_dir()]
        events = [json.loads(line) for line in (test / "history.jsonl").read_text().splitlines()]
        jobs = {e["job_id"] for e in events if e["source"] == "job" and e.get("job_id")}
        assert jobs == {f"job-{pid}"}, f"{folder.name} holds another session's history: {jobs}"
        verdict = json.loads((test / "verdict.json").read_text())
        assert verdict["valid"] is True
        run = json.loads((folder / "run.json").read_text())
        assert list(run["tests"]) == ["test_both.py::test_same_name_in_both"]
    assert (root / "latest").resolve() in [f.resolve() for f in folders]
    assert jobquake(["report", str(root)]) == 0
    reported = capsys.readouterr().out
    assert str(root / "latest") in reported and reported.count(": ✓") + reported.count(": valid") >= 1
