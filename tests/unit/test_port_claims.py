"""Port claims: a released claim leaves no lock file, and the files of ended processes are swept."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import _ports

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ports"
    monkeypatch.setattr(_ports, "LOCK_DIR", folder)
    monkeypatch.setattr(_ports, "_swept", False)
    return folder


def test_a_released_claim_removes_its_lock_file(lock_dir):
    port = _ports.free_port()
    assert (lock_dir / f"{port}.lock").exists()
    _ports.release_port(port)
    assert list(lock_dir.iterdir()) == []


def test_the_first_claim_sweeps_the_files_of_ended_processes_but_not_of_live_ones(lock_dir):
    lock_dir.mkdir(mode=0o700)
    stale = lock_dir / "20001.lock"
    stale.touch()
    held = lock_dir / "20002.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(held)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        port = _ports.free_port()
        assert not stale.exists(), "a lock file nobody holds outlived the sweep"
        assert held.exists(), "the sweep removed a claim a live process holds"
        assert port != 20002
        _ports.release_port(port)
    finally:
        holder.stdin.close()
        holder.wait(10)


def test_a_lock_whose_file_was_removed_meanwhile_is_not_a_claim(lock_dir):
    lock_dir.mkdir(mode=0o700)
    path = lock_dir / "20003.lock"
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    path.unlink()  # what a releaser or a sweep did between our open and our lock
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the lock is ours, on a file nobody else will see
    assert not _ports._still_there(fd, path)
    os.close(fd)
    assert _ports._lock(path) is not None  # a fresh file at the path is a claim again
