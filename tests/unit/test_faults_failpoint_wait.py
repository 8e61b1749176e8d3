"""A wait on a failpoint that did not fire says so, and why a Django commit failpoint may never fire."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.errors import FaultWaitTimeout
from harness.failpoints.control import FailpointControl
from harness.faults import Failpoint
from harness.history import Recorder


@pytest.fixture
def run(tmp_path):
    recorder = Recorder(tmp_path / "history.jsonl")
    yield SimpleNamespace(history=recorder, failpoints=FailpointControl.create(tmp_path / "fp"), seed=0)
    recorder.close()


@pytest.mark.parametrize("at", ["django.before_commit", "django.on_commit"])
def test_a_django_commit_failpoint_that_never_fired_says_autocommit_writes_do_not_reach_it(run, at):
    with Failpoint(at, "return", match={"process": "submit"}).bind(run) as fault:
        with pytest.raises(FaultWaitTimeout) as raised:
            fault.wait(timeout=0.05)
    assert "did not fire 1 time(s) within 0.05s" in str(raised.value)
    assert "autocommit writes do not pass through commit hooks (django.after_write fires after one)" \
        in str(raised.value)


def test_other_failpoints_that_never_fired_get_no_django_hint(run):
    with Failpoint("django.connection", "return").bind(run) as fault:
        with pytest.raises(FaultWaitTimeout) as raised:
            fault.wait(timeout=0.05)
    assert "autocommit" not in str(raised.value)
