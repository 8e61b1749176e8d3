"""scripts/start-dockerd.sh starts the engine with none of its caller's open files but the standard three."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(os.geteuid() != 0, reason="the script starts dockerd only as root")
def test_the_engine_inherits_no_descriptor_of_the_shell_that_started_it(tmp_path):
    seen = tmp_path / "fds"
    fake = tmp_path / "bin" / "dockerd"  # answers nothing: the script gives up after its wait
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nimport os\n"
                    f"open({str(seen)!r}, 'w').write(' '.join(os.listdir('/proc/self/fd')))\n")
    fake.chmod(0o755)
    lock = open(tmp_path / "lock", "w")
    # a descriptor the caller holds, as flock or a CI runner's pipe would: a free number, never a fixed one
    # (dup2 onto one would close whatever this process had there, a client's socket, behind its back)
    held = os.dup(lock.fileno())
    try:
        done = subprocess.run(["bash", str(ROOT / "scripts" / "start-dockerd.sh")], pass_fds=(held,),
                              env={**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}",
                                   "DOCKER_SOCKET": str(tmp_path / "no.sock"), "DOCKERD_LOG": str(tmp_path / "log"),
                                   "DOCKERD_WAIT_SECONDS": "2"}, capture_output=True, text=True, timeout=60)
    finally:
        os.close(held)
        lock.close()
    assert done.returncode == 1 and "did not answer" in done.stderr, done.stderr
    assert seen.exists(), done.stderr
    assert str(held) not in seen.read_text().split(), seen.read_text()
