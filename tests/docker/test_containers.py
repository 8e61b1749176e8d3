"""What only the docker backend does with a service: its container, labelled, removed or kept.

The Service contract itself runs on both backends in ``tests/contract/``.
"""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_service_runs_in_a_labelled_container_of_its_image(service, docker_client):
    container = docker_client.containers.get(service.container_name)
    assert container.status == "running"
    assert container.labels["jobquake.service"] == service.name
    assert service.image in container.image.tags[0]
    assert container.attrs["HostConfig"]["NetworkMode"] == "host"
    assert container.attrs["State"]["Pid"] == service.pid


def test_stop_removes_the_container_or_keeps_it_for_its_data(service, docker_client):
    name = service.container_name
    service.stop()
    remaining = [c.name for c in docker_client.containers.list(all=True, filters={"name": name})]
    assert remaining == ([name] if service.keep_on_stop else [])
    service.remove()
    assert docker_client.containers.list(all=True, filters={"name": name}) == []


def test_postgres_restart_keeps_its_data_as_the_database_restart_fault_expects(backend, tmp_path):
    from harness._ports import free_port

    pg = backend.postgres("postgres", port=free_port(), workdir=tmp_path)
    pg.start()
    with pg.connect("app") as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept VALUES (7)")
    old = pg.pid
    pg.stop()
    pg.spawn()  # what DatabaseRestart does: no after_ready, which would recreate the app database
    pg.wait_ready()
    assert pg.pid != old
    with pg.connect("app") as conn:
        assert conn.execute("SELECT n FROM kept").fetchall() == [(7,)]
