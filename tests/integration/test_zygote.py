"""App processes forked from the zygote start as a fresh interpreter would, and end the same way."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness._ports import free_port
from harness._wait import wait_until
from harness.instrument import LOADED_MARKER
from harness.instrument.control import InstrumentControl
from harness.stack.app import AppProcess
from harness.stack.readiness import ReadyCheck
from harness.stack.zygote import MAIN, Zygote
from tests.common.processes import alive

pytestmark = pytest.mark.integration

# what the app sees of its start, printed as one JSON line, then "up"; exits with argv[1] if given
PROBE = textwrap.dedent("""
    import json, os, sys
    print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "path": sys.path, "ppid": os.getppid(),
                      "env": os.environ.get("PROBE_VALUE"), "sid": os.getsid(0), "pid": os.getpid(),
                      "preloaded": "sqlalchemy" in sys.modules, "main": __name__}), flush=True)
    print("up", flush=True)
    if len(sys.argv) > 1 and sys.argv[1] == "raise":
        raise RuntimeError("the app failed")
    if len(sys.argv) > 1:
        sys.exit(int(sys.argv[1]))
    import time
    time.sleep(120)
""")


@pytest.fixture
def app_dir(tmp_path) -> Path:
    folder = tmp_path / "proj"
    (folder / "probeapp").mkdir(parents=True)
    (folder / "probeapp" / "__init__.py").write_text("")
    (folder / "probeapp" / "__main__.py").write_text(PROBE)
    return folder


@pytest.fixture
def zygote(tmp_path):
    z = Zygote(["sqlalchemy"], tmp_path / "zygote")
    yield z
    z.close()


def process(tmp_path, app_dir, zygote, command="python -m probeapp", env=None, name="probe") -> AppProcess:
    return AppProcess(name, command=command, values={}, ready=ReadyCheck.parse("log:^up"), start_timeout=20,
                      port=free_port(), workdir=tmp_path / "app", cwd=app_dir, zygote=zygote,
                      env={"PROBE_VALUE": "from-the-stack", **(env or {})})


def seen(proc: AppProcess) -> dict:
    return json.loads(next(line for line in proc.logs().splitlines() if line.startswith("{")))


def test_a_forked_process_sees_what_a_fresh_interpreter_would(tmp_path, app_dir, zygote):
    proc = process(tmp_path, app_dir, zygote, command="python -m probeapp --flag value",
                   env={"PYTHONPATH": str(tmp_path / "extra")})
    try:
        proc.start()
        got = seen(proc)
        assert got["ppid"] != os.getpid(), "not forked by the zygote"
        assert got["preloaded"], "the zygote's modules are not there"
        assert got["argv"] == [str(app_dir / "probeapp" / "__main__.py"), "--flag", "value"]
        assert got["main"] == "__main__"
        assert got["cwd"] == str(app_dir)
        assert got["path"][:2] == [str(app_dir), str(tmp_path / "extra")]
        assert got["env"] == "from-the-stack"
        assert got["sid"] == got["pid"] == proc.pid, "not in a session of its own"
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        assert cmdline == [sys.executable.encode(), b"-m", b"probeapp", b"--flag", b"value"]
    finally:
        proc.stop()
    assert not alive(got["pid"])


def test_exit_codes_are_the_processes_own(tmp_path, app_dir, zygote):
    for argv, code in (("3", 3), ("0", 0), ("raise", 1)):
        proc = process(tmp_path, app_dir, zygote, command=f"python -m probeapp {argv}")
        proc.spawn()
        assert proc._proc.wait(20) == code
        assert seen(proc)["ppid"] != os.getpid()
        proc.stop()
    assert "RuntimeError: the app failed" in proc.logs()


def test_a_killed_or_paused_process_behaves_as_a_child_would(tmp_path, app_dir, zygote):
    proc = process(tmp_path, app_dir, zygote)
    proc.start()
    try:
        proc.pause()
        wait_until(lambda: Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T",
                   timeout=5, what="stopped")
        proc.resume()
        proc.kill(signal.SIGKILL)
        assert proc.exit_code() == -signal.SIGKILL
    finally:
        proc.stop()


def test_a_command_a_fork_cannot_start_faithfully_is_started_the_usual_way(tmp_path, app_dir, zygote):
    for command, env in (("python -X dev -m probeapp", {}), ("python -m probeapp", {"PYTHONHASHSEED": "7"})):
        proc = process(tmp_path, app_dir, zygote, command=command, env=env)
        try:
            proc.start()
            assert seen(proc)["ppid"] == os.getpid()
            assert not seen(proc)["preloaded"]
        finally:
            proc.stop()


def test_a_console_script_of_this_interpreter_is_forked(tmp_path, app_dir, zygote):
    script = tmp_path / "bin" / "probe-script"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport runpy\nrunpy.run_module('probeapp', run_name='__main__')\n")
    script.chmod(0o755)
    proc = process(tmp_path, app_dir, zygote, command=f"{script} 5", env={"PYTHONPATH": str(app_dir)})
    proc.spawn()
    assert proc._proc.wait(20) == 5
    got = seen(proc)
    assert got["ppid"] != os.getpid()
    assert got["path"][:2] == [str(script.parent), str(app_dir)]  # the script's folder, as for a fresh one
    proc.stop()


def test_the_instrumentation_loads_into_a_forked_process(tmp_path, app_dir, zygote):
    env = InstrumentControl.create(tmp_path / "instrument").env(paidapi_url="http://127.0.0.1:1", job_id_from="",
                                                                pythonpath="")
    proc = process(tmp_path, app_dir, zygote, env=env)
    try:
        proc.start()  # fails unless the instrumentation wrote its marker
        assert LOADED_MARKER in proc.logs()
        assert seen(proc)["ppid"] != os.getpid()
    finally:
        proc.stop()


def test_a_closed_zygote_starts_again_for_the_next_process(tmp_path, app_dir, zygote):
    first = process(tmp_path, app_dir, zygote, command="python -m probeapp 0")
    first.spawn()
    first._proc.wait(20)
    zygote.close()
    second = process(tmp_path, app_dir, zygote, command="python -m probeapp 4", name="second")
    second.spawn()
    assert second._proc.wait(20) == 4
    assert seen(first)["ppid"] != seen(second)["ppid"] != os.getpid()


def test_a_process_outlives_its_killed_zygote_and_is_still_waited_for(tmp_path, app_dir, zygote):
    proc = process(tmp_path, app_dir, zygote)
    proc.start()
    zygote_pid = seen(proc)["ppid"]
    os.kill(zygote_pid, signal.SIGKILL)
    wait_until(lambda: not alive(zygote_pid), timeout=5, what="the zygote's end")
    assert proc.is_running()
    proc.stop(timeout=5)
    assert proc.exit_code() is not None
    assert not alive(proc.pid)


def test_the_zygote_ends_with_the_process_that_started_it(tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from harness.stack.zygote import Zygote
        z = Zygote(["json"], {str(tmp_path)!r})
        z._ready.wait(30)
        print(z._proc.pid, flush=True)
        time.sleep(120)
    """)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        zygote_pid = int(owner.stdout.readline())
        assert alive(zygote_pid)
        owner.kill()
        owner.wait()
        wait_until(lambda: not alive(zygote_pid), timeout=10, what="the zygote's end after its owner's SIGKILL")
    finally:
        owner.kill()
        owner.wait()


def test_a_preload_that_raises_is_listed_and_the_zygote_still_serves(tmp_path):
    # an app module that needs the app's environment at import: the zygote has pytest's
    (tmp_path / "needs_env.py").write_text("raise RuntimeError('DATABASE_URL is not set')\n")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    log = tmp_path / "zygote.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, str(MAIN), str(theirs.fileno()), "json", "needs_env", "not_there"],
                                stdout=out, stderr=subprocess.STDOUT, pass_fds=(theirs.fileno(),),
                                env={**os.environ, "PYTHONPATH": str(tmp_path)})
    theirs.close()
    try:
        ours.settimeout(30)
        assert ours.recv(64) == b"ready\n", log.read_text()
    finally:
        ours.close()  # the zygote reads EOF and ends
        proc.wait(10)
    text = log.read_text()
    assert "preloaded 1 module(s); not installed: not_there" in text
    assert "not preloaded: needs_env (RuntimeError: DATABASE_URL is not set)" in text
