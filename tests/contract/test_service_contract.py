"""The Service contract, checked the same way against every service of both backends (``backend``)."""
from __future__ import annotations

import signal

import pytest

from harness._wait import wait_until
from tests.common.processes import alive, family

pytestmark = pytest.mark.integration


def test_started_service_is_ready_and_logs(service):
    assert service.is_running()
    assert service.is_ready()
    # host:port, or a private socket (a Postgres URL names the socket's folder and port)
    assert service.address in service.url or service.address.rpartition("/")[0] in service.url
    assert service.logs(tail=5) != ""


def test_kill_ends_the_whole_group_and_restart_answers_again(service):
    leader = service.pid
    members = family(leader)
    assert leader in members
    service.kill(signal.SIGKILL)
    assert not service.is_running()
    assert not service.is_ready()
    wait_until(lambda: not any(alive(pid) for pid in members), timeout=5, what="killed group gone")
    service.restart()
    assert service.pid != leader
    assert service.is_ready()


def test_pause_stops_answers_until_resume(service):
    service.pause()
    assert service.is_running()
    assert not service.is_ready()
    service.resume()
    wait_until(service.is_ready, timeout=10, what=f"{service.name} ready after resume")


def test_stop_leaves_no_process_and_is_idempotent(service):
    members = family(service.pid)
    assert members
    service.stop()
    assert not service.is_running()
    assert [pid for pid in members if alive(pid)] == []
    service.stop()


def test_kill_of_a_stopped_service_is_a_clear_error(service):
    service.stop()
    with pytest.raises(Exception, match=rf"\[{service.name}\].*not running"):
        service.kill()
