"""Bad input on the docker backend: a clear ServiceError naming the image, the container, the
command and the log tail, and nothing left behind; leftovers of a killed run reaped by the next."""
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
from harness.config import resolve
from harness.errors import ServiceError
from harness.stack.docker import DockerBackend
from harness.stack.readiness import ReadyCheck
from tests.common.processes import alive

pytestmark = pytest.mark.integration


def leftovers(client, service: str) -> list[str]:
    return [c.name for c in client.containers.list(all=True, filters={"label": f"jobquake.service={service}"})]


def test_no_engine_answering_names_the_address_image_and_command(tmp_path):
    config = resolve(cli={"backend": "docker", "docker_host": "unix:///nonexistent/docker.sock"}, environ={})
    svc = DockerBackend(config).redis("redis", port=free_port(), workdir=tmp_path)
    with pytest.raises(ServiceError) as err:
        svc.start()
    message = str(err.value)
    assert "[redis] no Docker engine answers at unix:///nonexistent/docker.sock" in message
    assert "scripts/start-dockerd.sh" in message and "image jobquake/redis" in message
    assert "redis-server /etc/jobquake/redis.conf --bind 127.0.0.1" in err.value.command
    assert not svc.is_running()


def test_missing_image_names_the_key_to_set_and_creates_nothing(docker_client, tmp_path):
    config = resolve(cli={"backend": "docker", "docker_redis_image": "jobquake/no-such-image"}, environ={})
    backend = DockerBackend(config)
    svc = backend.redis("redis-noimage", port=free_port(), workdir=tmp_path)
    with pytest.raises(ServiceError, match=r"image 'jobquake/no-such-image' is not on this engine") as err:
        svc.start()
    assert "scripts/build-images.sh" in str(err.value) and "docker_redis_image" in str(err.value)
    assert leftovers(docker_client, "redis-noimage") == []


def test_port_taken_in_host_mode_fails_with_the_log_tail_and_removes_the_container(backend, docker_client,
                                                                                    tmp_path):
    port = free_port()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        svc = backend.redis("redis-squat", port=port, workdir=tmp_path)
        with pytest.raises(ServiceError) as err:
            svc.start()
    message = str(err.value)
    assert "[redis-squat] exited at once with code 1" in message and f"127.0.0.1:{port}" in message
    assert "image jobquake/redis, container jobquake-" in message
    assert "Address already in use" in err.value.log_tail
    assert leftovers(docker_client, "redis-squat") == []


def test_container_that_exits_at_once(backend, docker_client, tmp_path):
    proc = backend.app_process("app-exits", command="python -c \"import sys; print('boom: bad broker url'); "
                               "sys.exit(3)\"", values={}, ready=ReadyCheck.parse("tcp"), port=free_port(),
                               workdir=tmp_path, env={})
    with pytest.raises(ServiceError, match=r"\[app-exits\] exited at once with code 3 \(image jobquake/app") as err:
        proc.start()
    assert "boom: bad broker url" in err.value.log_tail
    assert err.value.command.startswith("python -c")  # the image's python, not the host's venv
    assert leftovers(docker_client, "app-exits") == []


def test_container_that_never_becomes_ready_is_removed(backend, docker_client, tmp_path):
    proc = backend.app_process("app-silent", command="python -c \"import time; print('starting', flush=True); "
                               "time.sleep(60)\"", values={}, ready=ReadyCheck.parse("tcp"), start_timeout=1.0,
                               port=free_port(), workdir=tmp_path, env={})
    with pytest.raises(ServiceError, match=r"\[app-silent\] did not become ready within 1.0s") as err:
        proc.start()
    assert "starting" in err.value.log_tail
    assert leftovers(docker_client, "app-silent") == []


def test_next_run_removes_what_a_killed_run_left(docker_client, tmp_path):
    script = textwrap.dedent(f"""
        import time
        from harness._ports import free_port
        from harness.config import resolve
        from harness.stack.docker import DockerBackend
        backend = DockerBackend(resolve(cli={{"backend": "docker"}}, environ={{}}))
        svc = backend.redis("redis-orphan", port=free_port(), workdir={str(tmp_path)!r})
        svc.start()
        print(svc.container_name, flush=True)
        time.sleep(120)
    """)
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    name = owner.stdout.readline().strip()
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert leftovers(docker_client, "redis-orphan") == [name], "the killed run could not clean up"
    removed = DockerBackend(resolve(cli={"backend": "docker"}, environ={})).reap()
    assert name in removed
    assert leftovers(docker_client, "redis-orphan") == []


def test_reap_leaves_containers_of_live_owners_alone(backend, tmp_path):
    svc = backend.redis("redis-live", port=free_port(), workdir=tmp_path)
    svc.start()
    assert svc.container_name not in backend.reap()
    assert svc.is_ready()


def test_a_failpoint_kill_inside_a_container_ends_the_whole_worker(backend, docker_client, tmp_path):
    """The control directory is shared through the bind mount, and a group kill works in the container."""
    from harness.failpoints.control import FailpointControl

    control = FailpointControl.create(tmp_path / "failpoints")
    control.arm("docker.probe", "kill", group=True)
    code = ("import subprocess; from harness.failpoints import failpoint; "
            "child = subprocess.Popen(['sleep', '60']); print(child.pid, flush=True); "
            "failpoint('docker.probe'); print('survived', flush=True)")
    proc = backend.app_process("app-failpoint", command=f"python -c \"{code}\"", values={},
                               ready=ReadyCheck.parse("tcp"), port=0, workdir=tmp_path / "app", env=control.env())
    proc.spawn()
    wait_until(lambda: docker_client.containers.get(proc.container_name).status == "exited", timeout=20,
               what="the container to die at its failpoint")
    assert not proc.is_running()
    assert docker_client.containers.get(proc.container_name).attrs["State"]["ExitCode"] == 128 + signal.SIGKILL
    child = int(proc.logs().split()[0])
    assert "survived" not in proc.logs()
    assert not alive(child)  # the pool child shared the group: gone with it
    [trigger] = control.triggers("docker.probe")
    assert trigger["pid"] == proc.pid  # the same pid on both sides: the pid namespace is the host's


def test_a_normal_stack_run_leaves_no_container(docker_client):
    from tests.common.tiny import tiny_stack

    stack = tiny_stack(backend="docker")
    stack.start()
    names = [svc.container_name for svc in stack.services()]
    assert all(names)
    stack.stop()
    remaining = {c.name for c in docker_client.containers.list(all=True)}
    assert remaining.isdisjoint(names)


def test_a_container_another_session_removes_while_reap_lists_them_is_passed_over(backend, tmp_path, monkeypatch):
    """Two sessions at once (xdist workers, two users' runs): one's start reaps while the other removes."""
    from docker.models.containers import ContainerCollection

    svc = backend.redis("redis-going", port=free_port(), workdir=tmp_path)
    svc.start()
    inspect = ContainerCollection.get
    ours = svc._container.id

    def removed_first(self, container_id):  # the other session removes it between the listing and the look
        if container_id == ours:
            self.client.api.remove_container(container_id, force=True)
        return inspect(self, container_id)

    monkeypatch.setattr(ContainerCollection, "get", removed_first)
    assert svc.container_name not in backend.reap()
