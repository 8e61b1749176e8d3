"""What containers share with the host: interpreter names, mounts, PYTHONPATH, the /proc view."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness.stack.container_host import Mount, code_mounts, env_with_path, in_image, local_start_ticks, process_alive


def test_the_host_interpreter_and_its_scripts_become_the_image_names():
    beside = str(Path(sys.executable).parent / "celery")
    assert in_image([sys.executable, "-m", "harness.proxy"]) == ["python", "-m", "harness.proxy"]
    assert in_image([beside, "-A", "app"]) == ["celery", "-A", "app"]
    assert in_image(["/usr/bin/redis-server", "--port", "1"]) == ["/usr/bin/redis-server", "--port", "1"]


def test_nested_folders_are_mounted_once_read_only(tmp_path):
    inner = tmp_path / "app" / "tests"
    inner.mkdir(parents=True)
    assert code_mounts(tmp_path / "app", inner, None) == [Mount(str((tmp_path / "app").resolve()))]


def test_pythonpath_keeps_the_apps_entries_first():
    env = env_with_path({"PYTHONPATH": "/app:/lib", "X": "1"}, "/opt/live", "/lib")
    assert env == {"PYTHONPATH": "/app:/lib:/opt/live", "X": "1"}
    assert env_with_path({}, "/opt/live") == {"PYTHONPATH": "/opt/live"}


def test_a_process_outside_any_container_has_no_local_ticks_and_dies_visibly():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert local_start_ticks(child.pid, "0123456789abcdef") is None  # not in that container's cgroup
        ticks = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
        assert process_alive(child.pid, ticks)
        assert not process_alive(child.pid, str(int(ticks) + 1))  # a reused pid is another process
    finally:
        child.kill()
        child.wait()
    assert not process_alive(child.pid, ticks)
    assert not process_alive(None, ticks)
