"""``python -m refapp run``: start the whole system (API, relay, workers, consumer, sweeper, beat).

Each part is its own process, in its own process group, started exactly as
the harness starts it (``python -m refapp.<part>``); addresses come from the
``REFAPP_*`` environment. Ctrl-C (or SIGTERM) stops them all.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading

from refapp import settings

PARTS = {
    "api": [sys.executable, "-m", "refapp.api"],
    "relay": [sys.executable, "-m", "refapp.relay"],
    "worker": [sys.executable, "-m", "refapp.worker"],
    "consumer": [sys.executable, "-m", "refapp.consumer"],
    "sweeper": [sys.executable, "-m", "refapp.sweeper"],
    "beat": [sys.executable, "-m", "celery", "-A", "refapp.celery_app", "beat", "--loglevel", "INFO",
             "--schedule", f"{tempfile.gettempdir()}/refapp-celerybeat-schedule"],
}
STOP_TIMEOUT = 10.0  # seconds each part gets to shut down before it is killed


def start(parts: list[str]) -> dict[str, subprocess.Popen[bytes]]:
    """Start ``parts``; each in its own session so it can be stopped as a group."""
    return {name: subprocess.Popen(PARTS[name], start_new_session=True) for name in parts}


def stop(procs: dict[str, subprocess.Popen[bytes]]) -> None:
    """SIGTERM each part's group, then SIGKILL what is left after STOP_TIMEOUT."""
    for proc in procs.values():
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # the group is the part and its children (e.g. prefork pool)


def main(argv: list[str] | None = None) -> int:
    """Run the parts until one exits or we are told to stop."""
    parser = argparse.ArgumentParser(prog="python -m refapp run")
    parser.add_argument("parts", nargs="*", help=f"which parts to start: {', '.join(PARTS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.parts) - PARTS.keys())
    if unknown:
        parser.error(f"unknown parts {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    settings.for_process()  # a bad setting or unknown mutant fails here, once, not in every part
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    procs = start(args.parts or list(PARTS))
    print("started: " + ", ".join(f"{name} (pid {p.pid})" for name, p in procs.items()), flush=True)
    try:
        while not done.wait(0.5):
            exited = [name for name, p in procs.items() if p.poll() is not None]
            if exited:
                print(f"stopping: {', '.join(exited)} exited", file=sys.stderr)
                return 1
        return 0
    finally:
        stop(procs)
