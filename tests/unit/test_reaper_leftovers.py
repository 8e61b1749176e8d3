"""Removing a run's folder ends what it recorded and is still running, not only what a dead owner left.

Both in a stand-in owner's folders (``separate_owner``): this process's may hold a session's stack.
"""
from __future__ import annotations

import subprocess

from harness._wait import wait_until
from harness.stack import reaper


def test_a_recorded_process_still_running_is_ended_when_the_run_folder_is_removed(separate_owner: str) -> None:
    lost = subprocess.Popen(["sleep", "300"])  # a process the stack started and then lost track of
    try:
        reaper.record(lost.pid)
        assert reaper.remove_run_dir() == [lost.pid]
        assert wait_until(lambda: lost.poll() is not None, timeout=10, what="the lost process to end")
    finally:
        if lost.poll() is None:
            lost.kill()
        lost.wait()


def test_a_forgotten_process_is_left_alone(separate_owner: str) -> None:
    stopped = subprocess.Popen(["sleep", "300"])
    try:
        reaper.record(stopped.pid)
        reaper.forget(stopped.pid)  # what a clean stop does
        assert reaper.remove_run_dir() == []
        assert stopped.poll() is None
    finally:
        stopped.kill()
        stopped.wait()
