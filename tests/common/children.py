"""Run a harness command (a pytest session, ``jobquake nightly``) as a child that may clean up.

``subprocess.run`` answers an interruption or its own timeout with SIGKILL,
which cuts the child's clean-up short: the stack it started (servers and
workers in sessions of their own) stays behind until a later run reaps it.
``run_cleanly`` passes a stop on as SIGTERM instead, which the harness turns
into its clean stop, and waits a bounded time for it before killing.
"""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Mapping, Sequence

CLEAN_UP_S = 30.0  # a stack stopping on a signal: QUICK_STOP per wave of services, and the run folder


def run_cleanly(cmd: Sequence[str], *, timeout: float, cwd: Path | str | None = None,
                env: Mapping[str, str] | None = None,
                clean_up: float = CLEAN_UP_S) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(cmd, capture_output=True, text=True, timeout=...)``, stopping the child with
    SIGTERM (then SIGKILL after ``clean_up`` seconds) when this test is interrupted or times out."""
    with subprocess.Popen(list(cmd), cwd=cwd, env=None if env is None else dict(env), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.terminate()
            try:
                proc.communicate(timeout=clean_up)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            raise
    return subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)
