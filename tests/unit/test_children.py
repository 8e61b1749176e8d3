"""run_cleanly: a child stopped by the test's timeout gets SIGTERM and the time to clean up."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.common.children import run_cleanly

CHILD = """
import pathlib, signal, sys, time
def stop(signum, frame):
    time.sleep(0.3)  # a clean-up that takes a while: stopping a stack
    pathlib.Path(sys.argv[1]).write_text("cleaned up")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
time.sleep(60)
"""


def test_a_timed_out_child_cleans_up_before_it_ends(tmp_path):
    marker = tmp_path / "clean"
    with pytest.raises(subprocess.TimeoutExpired):
        run_cleanly([sys.executable, "-c", CHILD, str(marker)], timeout=1.0)
    assert marker.read_text() == "cleaned up"


def test_a_child_that_ignores_the_stop_is_killed_after_the_bound(tmp_path):
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    with pytest.raises(subprocess.TimeoutExpired):
        run_cleanly([sys.executable, "-c", stubborn], timeout=0.5, clean_up=0.5)


def test_a_finished_child_gives_its_output_and_code():
    done = run_cleanly([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], timeout=30)
    assert (done.returncode, done.stdout) == (3, "out\n")
