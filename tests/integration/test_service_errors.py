"""Bad input gives an error naming the service, command, address and log tail, and leaves nothing running."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from harness._ports import free_port
from harness._wait import wait_until
from harness.errors import MissingBinaryError, ServiceError
from harness.stack import reaper
from harness.stack.app import AppProcess
from harness.stack.readiness import ReadyCheck
from harness.stack.redis import RedisService
from tests.common.processes import alive

pytestmark = pytest.mark.integration


def test_missing_binary_names_the_install_command(tmp_path):
    with pytest.raises(MissingBinaryError) as err:
        RedisService("redis", port=free_port(), workdir=tmp_path, binary="/nonexistent/redis-server")
    assert "apt-get install -y redis-server" in str(err.value)
    assert err.value.service == "redis"


def test_port_taken_fails_with_the_log_tail_and_nothing_left(tmp_path):
    port = free_port()
    with socket.socket() as squatter:  # an app's own server: it binds its port itself
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        svc = AppProcess("api", command=f"{sys.executable} -m http.server --bind 127.0.0.1 {{port}}", values={},
                         ready=ReadyCheck.parse("http:/"), port=port, workdir=tmp_path)
        with pytest.raises(ServiceError) as err:
            svc.start()
    message = str(err.value)
    assert "[api] exited at once" in message and f"127.0.0.1:{port}" in message
    assert "http.server" in message  # the command
    assert "Address already in use" in "\n".join(err.value.__notes__)
    assert not svc.is_running()


def test_command_that_exits_at_once(tmp_path):
    proc = AppProcess("worker1", command="python -c \"import sys; print('boom: bad broker url'); sys.exit(3)\"",
                      values={}, ready=ReadyCheck.parse(r"log:\bready\."), port=free_port(), workdir=tmp_path)
    with pytest.raises(ServiceError, match=r"\[worker1\] exited at once with code 3") as err:
        proc.start()
    assert "boom: bad broker url" in err.value.log_tail
    assert "python" in err.value.command


def test_service_that_never_becomes_ready_is_stopped(tmp_path):
    proc = AppProcess("api", command="python -c \"import time; print('starting', flush=True); time.sleep(60)\"",
                      values={}, ready=ReadyCheck.parse("tcp"), start_timeout=1.0, port=free_port(),
                      workdir=tmp_path)
    with pytest.raises(ServiceError, match=r"\[api\] did not become ready within 1.0s") as err:
        proc.start()
    assert "starting" in err.value.log_tail
    assert not proc.is_running()


def test_next_run_reaps_what_a_killed_run_left(tmp_path):
    """A run SIGKILLed mid-session leaves redis-server behind; the next run's reap() ends it."""
    script = textwrap.dedent(f"""
        import sys, time
        from harness._ports import free_port
        from harness.stack.redis import RedisService
        svc = RedisService("redis", port=free_port(), workdir={str(tmp_path)!r})
        svc.start()
        print(svc.pid, flush=True)
        time.sleep(120)
    """)
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    leftover = int(owner.stdout.readline())
    assert alive(leftover)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert alive(leftover), "the killed run could not clean up"
    killed = reaper.reap()
    assert leftover in killed
    wait_until(lambda: not alive(leftover), timeout=5, what="leftover redis-server gone")


def test_next_run_frees_the_in_memory_cluster_a_killed_run_left(tmp_path):
    """A session's Postgres cluster lives in memory (tmpfs): after a SIGKILLed run, the next
    run's reap() ends the server and deletes the cluster, or the memory would stay taken."""
    script = textwrap.dedent(f"""
        import time
        from harness._ports import free_port
        from harness.stack.postgres import PostgresService
        svc = PostgresService("postgres", port=free_port(), workdir={str(tmp_path)!r})
        svc.start()
        print(svc.pid, svc.datadir, flush=True)
        time.sleep(120)
    """)
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    pid_text, datadir = owner.stdout.readline().split()
    leftover = int(pid_text)
    root = reaper.memory_root()
    assert root is not None, "this machine has no roomy tmpfs at /dev/shm"
    assert datadir.startswith(str(root)) and os.path.isdir(datadir)
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert leftover in reaper.reap()
    wait_until(lambda: not alive(leftover), timeout=5, what="leftover postgres gone")
    assert not os.path.exists(os.path.dirname(datadir)), "the killed run's memory folder is still there"


def test_reaper_leaves_processes_of_live_owners_alone(tmp_path):
    svc = RedisService("redis", port=free_port(), workdir=tmp_path)
    with svc:
        assert svc.pid not in reaper.reap()
        assert svc.is_ready()
