"""``python -m harness.paidapi``: starts fast, logs each call, exits cleanly on SIGTERM."""
from __future__ import annotations

import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from harness._ports import free_port, release_port
from harness._wait import wait_until
from harness.paidapi.control import PaidAPIControl

START_BOUND = 5.0  # seconds; start-up measures ~0.3 s here


class PaidAPIProcess:
    """The provider as a child process, its log in a file (a pipe could fill and block it)."""

    def __init__(self, tmp_path: Path, *args: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "paidapi.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "harness.paidapi", "--port", str(self.port), *args],
            stdout=self._log, stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # by pid: only the child this test started
        self.process.wait(timeout=10)
        self._log.close()
        release_port(self.port)


@pytest.fixture
def provider_process(tmp_path: Path) -> Iterator[PaidAPIProcess]:
    child = PaidAPIProcess(tmp_path, "--seed", "3", "--time-scale", "0.01", "--profile", "fixed:1")
    try:
        yield child
    finally:
        child.close()


def test_starts_serves_logs_and_stops_on_sigterm(provider_process: PaidAPIProcess) -> None:
    with PaidAPIControl(provider_process.url, timeout=1.0) as control:
        wait_until(control.health, timeout=START_BOUND, what="paidapi answers /health")
        assert control.settings()["seed"] == 3

        response = httpx.post(f"{provider_process.url}/v1/generate", json={"prompt": "p"},
                              headers={"X-Job-Id": "j"}, timeout=10)
        assert response.status_code == 200
        control.set_mode("hang")
        with ThreadPoolExecutor(max_workers=1) as pool:
            hung = pool.submit(httpx.post, f"{provider_process.url}/v1/generate",
                               json={"prompt": "p"}, headers={"X-Job-Id": "h"}, timeout=10)
            control.wait_for_call(job_id="h", state="hung", timeout=5)

            provider_process.process.send_signal(signal.SIGTERM)
            assert provider_process.process.wait(timeout=5) == 0
            assert hung.result(timeout=5).status_code == 503  # answered, not dropped

    log = provider_process.log()
    assert "listening on" in log
    assert "call 1 start route=/v1/generate job=j" in log
    assert "call 1 end state=done status=200 billed=True" in log
    assert "call 2 end state=failed status=503 billed=False" in log


def test_a_bad_profile_exits_with_status_2(tmp_path: Path) -> None:
    child = PaidAPIProcess(tmp_path, "--profile", "warp")
    try:
        assert child.process.wait(timeout=10) == 2
        assert "unknown latency profile 'warp'" in child.log()
    finally:
        child.close()


def test_call_key_and_prices_reach_the_provider(tmp_path: Path) -> None:
    child = PaidAPIProcess(tmp_path, "--time-scale", "0.01", "--profile", "fixed:1",
                           "--call-key", "sum:{job_id}:{step}",
                           "--prices", '{"my-model": {"input": 5, "output": 7}}')
    try:
        with PaidAPIControl(child.url, timeout=1.0) as control:
            wait_until(control.health, timeout=START_BOUND, what="paidapi answers /health")
            settings = control.settings()
            assert settings["call_key"] == "sum:{job_id}:{step}"
            assert settings["prices"]["my-model"] == {"input": 5.0, "output": 7.0}
            assert "gpt-4o-mini" in settings["prices"]  # the built-in list prices stay
    finally:
        child.close()


def test_a_bad_call_key_exits_with_status_2_naming_it(tmp_path: Path) -> None:
    child = PaidAPIProcess(tmp_path, "--call-key", "sum:{step}")
    try:
        assert child.process.wait(timeout=10) == 2
        assert "call_key = 'sum:{step}'" in child.log()
    finally:
        child.close()
