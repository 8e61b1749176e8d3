"""Run state is private: what another user plants where our runs live is never trusted or followed."""
from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from harness import _ports
from harness._private_dir import UnsafeDirError
from harness.stack import reaper

DEAD_OWNER = "999999999-1"  # no pid this large runs: a run folder whose owner is gone


@pytest.fixture
def victim() -> Iterator[subprocess.Popen]:
    """A process of ours that an attacker would like our next run to kill."""
    proc = subprocess.Popen(["sleep", "120"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def roots_in(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Our roots of run folders (disk and memory) and port locks under ``shared_tmp``."""
    monkeypatch.setattr(reaper, "RUNS_DIR", shared_tmp / reaper.ROOT_NAME)
    monkeypatch.setattr(reaper, "SHORT_ROOT", shared_tmp / reaper.SHORT_ROOT.name)  # not this process's sockets
    monkeypatch.setenv(reaper.MEMORY_DIR_ENV, str(shared_tmp / "shm"))
    (shared_tmp / "shm").mkdir()
    (shared_tmp / "shm").chmod(0o1777)
    monkeypatch.setattr(reaper, "MEMORY_MIN_FREE", 0)
    monkeypatch.setattr(_ports, "LOCK_DIR", shared_tmp / _ports.LOCK_DIR.name)
    return shared_tmp


def pid_record(pid: int, uid: int) -> str:
    return f"{reaper._start_ticks(pid)} {uid}"


def test_a_pid_file_another_user_plants_is_never_signalled(attacker, roots_in, victim):
    root = reaper.RUNS_DIR
    planted = root / DEAD_OWNER / "pids" / str(victim.pid)
    done = attacker.python(
        f"import os\nos.makedirs({str(planted.parent)!r}, mode=0o777)\n"
        f"open({str(planted)!r}, 'w').write({pid_record(victim.pid, 0)!r})\n")
    assert done.returncode == 0, done.stderr
    assert victim.pid not in reaper.reap()
    assert victim.poll() is None, "the reaper killed a process named by another user's pid file"
    assert planted.exists(), "the reaper must not even clean up another user's folders"
    with pytest.raises(UnsafeDirError, match=f"owned by uid {attacker.uid}, not by this user"):
        reaper.run_dir()


def test_symlinks_planted_for_our_roots_are_not_followed(attacker, roots_in, tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    links = [reaper.RUNS_DIR, roots_in / "shm" / reaper.ROOT_NAME, _ports.LOCK_DIR]
    for link in links:
        done = attacker.python(f"import os\nos.symlink({str(private)!r}, {str(link)!r})\n")
        assert done.returncode == 0, done.stderr
    for make in (reaper.run_dir, reaper.memory_dir, _ports.free_port):
        with pytest.raises(UnsafeDirError, match="not a folder"):
            make()
    reaper.reap()
    reaper.remove_run_dir()
    assert stat.S_IMODE(private.stat().st_mode) == 0o700, "a planted symlink made us chmod its target"
    assert list(private.iterdir()) == [], "a planted symlink made us write into its target"


def test_our_own_roots_are_private_and_shared_with_the_server_group_by_traversal_only(roots_in):
    expected = 0o710 if os.geteuid() == 0 else 0o700  # root runs Postgres as postgres, who must get in
    for folder in (reaper.run_dir(), reaper.memory_dir(), reaper.RUNS_DIR):
        info = folder.stat()
        assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == expected
    _ports.free_port()
    assert stat.S_IMODE(_ports.LOCK_DIR.stat().st_mode) == 0o700


def test_the_reaper_checks_start_time_and_uid_and_follows_no_symlink_in_our_own_root(roots_in, victim):
    root = reaper.run_dir().parent
    bad_uid = root / DEAD_OWNER / "pids" / str(victim.pid)
    bad_uid.parent.mkdir(parents=True)
    bad_uid.write_text(pid_record(victim.pid, 12345))  # the pid is now someone else's process
    elsewhere = roots_in / "elsewhere"
    (elsewhere / "pids").mkdir(parents=True)
    (elsewhere / "pids" / str(victim.pid)).write_text(pid_record(victim.pid, os.geteuid()))
    (root / "999999998-1").symlink_to(elsewhere)
    assert reaper.reap() == [] and victim.poll() is None
    assert (elsewhere / "pids" / str(victim.pid)).exists(), "reap() followed a symlink"
    assert not (root / DEAD_OWNER).exists()

    good = root / DEAD_OWNER / "pids" / str(victim.pid)  # the control: a true record is acted on
    good.parent.mkdir(parents=True)
    good.write_text(pid_record(victim.pid, os.geteuid()))
    assert victim.pid in reaper.reap()
    victim.wait(timeout=5)  # killed (its status may already have been collected by the reaper)
