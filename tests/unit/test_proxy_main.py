"""``python -m harness.proxy`` as the harness runs it: a process with a config, logs and SIGTERM."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.proxy import ProxyClient
from tests.common.proxy import echo, round_trip  # noqa: F401  (fixtures)

STARTUP_BOUND = 5.0  # seconds; it starts in a fraction of one on an idle machine


def _command(port: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "harness.proxy", "--port", str(port), *extra]


@pytest.fixture
def api_port() -> Iterator[int]:
    port = free_port()
    yield port
    release_port(port)


@pytest.fixture
def run_proxy(tmp_path: Path) -> Iterator:
    """Start the process with stderr to a file; always reaped, by its own pid."""
    started: list[subprocess.Popen[bytes]] = []

    def start(command: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
        log = tmp_path / f"proxy-{len(started)}.log"
        with open(log, "wb") as err:
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        started.append(proc)
        return proc, log

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def test_serves_the_config_logs_calls_and_connections_and_stops_on_sigterm(
    run_proxy, api_port: int, echo, tmp_path: Path
) -> None:
    config = tmp_path / "proxies.json"
    config.write_text(json.dumps([{"name": "echo", "upstream": echo.address, "listen": "127.0.0.1:0"}]))
    start = time.monotonic()
    proc, log = run_proxy(_command(api_port, "--seed", "3", "--config", str(config)))
    with ProxyClient(f"http://127.0.0.1:{api_port}", timeout=2) as api:
        wait_until(api.running, timeout=STARTUP_BOUND, what="proxy API up")
        assert time.monotonic() - start < STARTUP_BOUND
        proxy = api.get_proxy("echo")
        assert round_trip(proxy.listen_port) == b"ping"
    wait_until(lambda: "closed" in log.read_text(), timeout=5, what="connection close logged")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    text = log.read_text()
    assert "populated 1 proxies" in text
    assert f"API listening on http://127.0.0.1:{api_port} (seed 3)" in text
    assert "api GET /proxies/echo -> 200" in text
    assert "proxy echo: connection from 127.0.0.1:" in text and "opened" in text


@pytest.mark.parametrize("content, message", [
    ('[{"name": "x", "upstream": "127.0.0.1:9", "listen": "0.0.0.0:0"}]', "is not on loopback"),
    ('[{"upstream": "127.0.0.1:9"}]', "missing required field: name at proxy 1"),
    ("{not json", "Expecting property name"),
])
def test_a_bad_config_exits_2_with_the_reason(run_proxy, api_port: int, tmp_path: Path,
                                              content: str, message: str) -> None:
    config = tmp_path / "bad.json"
    config.write_text(content)
    proc, log = run_proxy(_command(api_port, "--config", str(config)))
    assert proc.wait(STARTUP_BOUND * 2) == 2
    assert message in log.read_text()


def test_the_api_never_listens_beyond_loopback(run_proxy, api_port: int) -> None:
    proc, log = run_proxy(_command(api_port, "--host", "0.0.0.0"))
    assert proc.wait(STARTUP_BOUND * 2) == 2
    assert "is not on loopback" in log.read_text()


def test_the_server_process_does_not_import_the_http_client() -> None:
    probe = "import sys, harness.proxy.__main__; print('httpx' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30,
                            check=True).stdout
    assert output.strip() == "False"
