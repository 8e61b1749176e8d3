"""How long a stop signal takes to leave nothing of a run: processes, run folders, in-memory cluster.

Starts pytest on the harness's small test app (``tests/tinyapp``) with a
scenario that waits, sends the signal once the stack is up, and measures
until every recorded process has died and the run folders are gone, then
until pytest has exited. Writes ``benchmarks/results/clean_stop.json``.

    .venv/bin/python benchmarks/clean_stop.py [--runs 3]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness._wait import wait_until  # noqa: E402
from tests.integration.test_clean_stop import (  # noqa: E402
    WAITING_SCENARIO, leftovers, project, recorded, start_pytest,
)

RESULTS = Path(__file__).parent / "results" / "clean_stop.json"
TARGET_S = 10.0  # the bound the tests hold the harness to


def one_stop(sig: signal.Signals) -> tuple[float, float]:
    """(seconds until nothing of the run is left, seconds until pytest exited) after ``sig``."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc, owner = start_pytest(project(folder, WAITING_SCENARIO))
        try:
            wait_until(lambda: (folder / "ready").exists(), timeout=120, what="the stack started")
            pids = recorded(owner)
            started = time.monotonic()
            proc.send_signal(sig)
            wait_until(lambda: not leftovers(owner, pids), timeout=60, interval=0.005, what="nothing left")
            gone = time.monotonic() - started
            proc.wait(timeout=60)
            return gone, time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per signal")
    args = parser.parse_args(argv)
    figures = {}
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        runs = [one_stop(sig) for _ in range(args.runs)]
        gone, exited = [r[0] for r in runs], [r[1] for r in runs]
        figures[sig.name] = {"nothing_left_s": {"median": statistics.median(gone), "max": max(gone), "all": gone},
                             "pytest_exited_s": {"median": statistics.median(exited), "all": exited}}
        print(f"{sig.name:<8} nothing left after {statistics.median(gone):.2f} s (max {max(gone):.2f} s, "
              f"target {TARGET_S:.0f} s); pytest exited after {statistics.median(exited):.2f} s")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                               "load_1min": os.getloadavg()[0]},
                                   "runs": args.runs, "target_s": TARGET_S, "signals": figures}, indent=1))
    print(f"written: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
