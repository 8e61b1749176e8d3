"""A session leaves nothing in the machine's temporary folder, even when its scenarios kill workers.

Before, every SIGKILLed Celery worker left an empty ``pymp-*`` folder in
``$TMPDIR`` (billiard's arena, whose clean-up never runs in a killed
process), and every port claim left its lock file, hundreds of each on a CI
machine. App processes now get a ``TMPDIR`` inside the run folder, which goes
with it, and port lock files are removed when released.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_kill_scenarios_leave_no_pymp_folder_and_no_lock_file(tmp_path):
    machine_tmp = tmp_path / "tmp"  # the session's $TMPDIR: what is left in it is what it leaves behind
    machine_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(machine_tmp)}
    done = subprocess.run([sys.executable, "-m", "pytest", "scenarios/test_kill_worker.py", "-p", "no:cacheprovider",
                           "-q", f"--jobquake-artifacts={tmp_path / 'artifacts'}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    left = sorted(str(p.relative_to(machine_tmp)) for p in machine_tmp.rglob("*"))
    assert [p for p in left if "pymp-" in p] == [], "a killed worker's arena was left in $TMPDIR"
    assert [p for p in left if p.endswith(".lock")] == [], "port lock files outlived the session"
    uid = os.geteuid()
    assert set(left) <= {f"jobquake-ports-{uid}", f"jobquake-runs-{uid}"}, left  # the per-user roots, empty
