"""Nothing of a run remains after a stop signal or a failed start: no process, no run folder, no memory."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.errors import ServiceError
from harness.stack import reaper
from harness.stack.app import AppProcess
from harness.stack.process import ProcessService, start_all
from harness.stack.readiness import ReadyCheck

pytestmark = pytest.mark.integration

TINYAPP_DIR = Path(__file__).parent.parent / "tinyapp"
NOTHING_LEFT_WITHIN = 10.0  # seconds from the signal until every trace of the run is gone
PYTEST_EXITS_WITHIN = 30.0  # seconds more for pytest to print its summary and exit
WAITING_SCENARIO = '''
import os, time

def test_waits_for_the_signal(jq):
    open(os.environ["JQ_TEST_READY"], "w").close()
    time.sleep(300)
'''
FAILING_APP = '''
[tool.jobquake.processes.api]
command = "python -c 'import sys; sys.exit(3)'"
'''


def project(tmp_path: Path, scenario: str, extra_config: str = "") -> Path:
    shutil.copy(TINYAPP_DIR / "tinyapp.py", tmp_path / "tinyapp.py")
    (tmp_path / "pyproject.toml").write_text((TINYAPP_DIR / "pyproject.toml").read_text() + extra_config)
    (tmp_path / "test_scenario.py").write_text(scenario)
    return tmp_path


def start_pytest(folder: Path) -> tuple[subprocess.Popen, str]:
    """A pytest run of ``folder`` and its owner id (the name of its run folders)."""
    env = {**os.environ, "JQ_TEST_READY": str(folder / "ready")}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(folder)],
                            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc, reaper.owner_id(proc.pid)


def run_folders(owner: str) -> list[Path]:
    roots = [reaper.RUNS_DIR] + ([reaper.memory_root()] if reaper.memory_root() else [])
    return [root / owner for root in roots]


def recorded(owner: str) -> dict[int, str]:
    """The processes the run recorded: pid -> start time."""
    found = {}
    pids = reaper.RUNS_DIR / owner / "pids"
    for pid in reaper.recorded_pids(reaper.RUNS_DIR / owner):
        try:
            found[pid] = (pids / str(pid)).read_text().split()[0]
        except (OSError, IndexError):
            continue  # forgotten meanwhile: it stopped
    return found


def leftovers(owner: str, pids: dict[int, str]) -> list[str]:
    alive = [f"pid {pid}" for pid, ticks in pids.items()
             if reaper._start_ticks(pid) == ticks and _state(pid) != "Z"]
    return alive + [str(folder) for folder in run_folders(owner) if folder.exists()]


def _state(pid: int) -> str | None:
    fields = reaper._stat_fields(pid)
    return fields[0] if fields else None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_stop_signal_to_pytest_leaves_nothing_within_seconds(tmp_path, sig):
    proc, owner = start_pytest(project(tmp_path, WAITING_SCENARIO))
    try:
        wait_until(lambda: (tmp_path / "ready").exists() or proc.poll() is not None, timeout=60,
                   what="the scenario running on a started stack")
        assert proc.poll() is None, proc.stdout.read()
        pids = recorded(owner)
        assert len(pids) >= 6, pids  # redis, postgres, sqs, paid API, proxy, a worker
        assert any(folder.exists() for folder in run_folders(owner))
        signalled = time.monotonic()
        proc.send_signal(sig)
        wait_until(lambda: not leftovers(owner, pids), timeout=NOTHING_LEFT_WITHIN,
                   what=f"nothing left of the run after {sig.name}")
        assert time.monotonic() - signalled < NOTHING_LEFT_WITHIN
        proc.wait(timeout=PYTEST_EXITS_WITHIN)  # then pytest itself reports and ends
        assert f"stopped by {sig.name}" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_failed_start_leaves_no_process_no_run_folder_and_no_cluster_in_memory(tmp_path):
    proc, owner = start_pytest(project(tmp_path, WAITING_SCENARIO, FAILING_APP))
    seen: dict[int, str] = {}
    while proc.poll() is None:  # note every process the run records while it starts
        seen.update(recorded(owner))
        time.sleep(0.01)
    output = proc.stdout.read()
    assert "[api] exited at once with code 3" in output, output
    assert seen, "the infrastructure should have started before the app failed"
    assert leftovers(owner, seen) == []


class _NeverReady(ProcessService):
    """A process that runs but never answers: only a give-up can end its start early."""

    def command(self) -> list[str]:
        return ["sleep", "60"]

    def probe(self) -> bool:
        return False


def test_a_port_collision_is_reported_as_soon_as_that_service_exits(tmp_path):
    port, other = free_port(), free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        api = AppProcess("api", command=f"{sys.executable} -m http.server --bind 127.0.0.1 {{port}}", values={},
                         ready=ReadyCheck.parse("http:/"), port=port, workdir=tmp_path / "api")
        slow = _NeverReady("slow", port=other, workdir=tmp_path / "slow")
        started = time.monotonic()
        with pytest.raises(ServiceError, match=r"\[api\] exited at once"):
            start_all([api, slow], timeout=30)
        assert time.monotonic() - started < 5, "the other service's 30 s start timeout was waited out"
        assert not slow.is_running() and not api.is_running()
    release_port(port)
    release_port(other)
