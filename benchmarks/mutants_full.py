"""What the full cross matrix costs and where it goes: wall, machine CPU, CPU per pair, restarts.

Runs ``jobquake mutants --full --jobs N`` with the machine's CPU read from
/proc/stat before and after (run it on a quiet machine: everything counts),
or reads a finished run's folder (``--from``, no CPU figure then). From each
scenario's history in the run's artifacts it counts the tests after which
isolation had to kill the app's processes: work was still pending after the
verdict (a mutant's stuck job), so whatever a process held in memory dies
with it and the next test's reset starts every process again. Then it
measures what one such restart costs: a stack of this project is started,
its app processes are killed the way isolation kills them and started again
by a reset, ``--restarts`` times, with the idle stack's own rate taken off.
``restarts x CPU per restart`` is the part of the matrix's CPU that goes to
starting the app again. Writes ``benchmarks/results/mutants_full_cost.json``.

    .venv/bin/python benchmarks/mutants_full.py [--jobs 4] [--restarts 5] [--from .jobquake/mutants]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.history import load
from harness.isolation import stop_holders
from harness.stack import reaper
from harness.stack.stack import Stack

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "mutants_full_cost.json"
TICKS = os.sysconf("SC_CLK_TCK")
IDLE_WINDOW_S = 5.0


def machine_cpu() -> float:
    """CPU seconds every core spent not idle since boot (/proc/stat: all but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / TICKS


def run_matrix(jobs: int, work: Path) -> dict:
    out = work.parent / "mutants-full.json"
    cpu, wall = machine_cpu(), time.monotonic()
    code = subprocess.call([sys.executable, "-m", "harness.cli", "mutants", "--full", "--jobs", str(jobs),
                            "--out", str(out)], cwd=ROOT)
    return {"exit": code, "jobs": jobs, "wall_s": round(time.monotonic() - wall, 1),
            "machine_cpu_s": round(machine_cpu() - cpu, 1), "matrix": str(out.relative_to(ROOT))}


def restarts_in(work: Path) -> dict:
    """Per session folder (a mutant, or ``none``): tests judged, tests followed by an isolation kill."""
    sessions = {}
    for session in sorted(p for p in work.iterdir() if p.is_dir() and (p / "pytest.out").exists()):
        tests = restarted = 0
        for path in (session / "latest").glob("*/history.jsonl"):  # the pytest session's own folder
            tests += 1
            restarted += any(e.name == "isolate" and (e.data or {}).get("stopped") for e in load(path))
        sessions[session.name] = {"tests": tests, "restarts": restarted}
    return sessions


def restart_cost(samples: int) -> dict:
    """CPU seconds of one isolation kill and restart of the app, the idle stack's rate taken off."""
    reaper.reap()
    stack = Stack(resolve(pyproject=find_pyproject(ROOT)), reaper.run_dir() / "stack")
    stack.start()
    costs, walls = [], []
    try:
        for _ in range(samples):
            stack.reset()  # a reset alone first: what the restart adds is measured against nothing pending
            cpu, started = machine_cpu(), time.monotonic()
            time.sleep(IDLE_WINDOW_S)  # the idle rate of this stack, just before: a measurement window
            idle_rate = (machine_cpu() - cpu) / (time.monotonic() - started)
            cpu, started = machine_cpu(), time.monotonic()
            stop_holders(stack)
            stack.reset()  # starts every killed process again and waits until each is ready
            took = time.monotonic() - started
            costs.append(machine_cpu() - cpu - idle_rate * took)
            walls.append(took)
    finally:
        stack.stop()
        reaper.remove_run_dir()
    return {"samples": samples, "cpu_s_median": round(statistics.median(costs), 2),
            "cpu_s_all": [round(c, 2) for c in costs], "wall_s_median": round(statistics.median(walls), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--restarts", type=int, default=5, help="restarts to measure (0: none)")
    parser.add_argument("--from", dest="work", type=Path, default=None,
                        help="a finished run's folder (.jobquake/mutants): count, do not run")
    args = parser.parse_args()
    work = (args.work or ROOT / ".jobquake" / "mutants").resolve()
    figures: dict = {"machine": {"cpus": os.cpu_count()}}
    if args.work is None:
        figures["run"] = run_matrix(args.jobs, work)
        print(f"matrix: {figures['run']['wall_s']:.0f} s wall, {figures['run']['machine_cpu_s']:.0f} CPU-s "
              f"of the machine (exit {figures['run']['exit']})")
    sessions = restarts_in(work)
    tests = sum(s["tests"] for s in sessions.values())
    restarts = sum(s["restarts"] for s in sessions.values())
    figures.update(sessions=sessions, tests=tests, restarts=restarts)
    print(f"{len(sessions)} sessions, {tests} tests judged, {restarts} followed by an isolation restart")
    if args.restarts:
        cost = figures["restart_cost"] = restart_cost(args.restarts)
        share = restarts * cost["cpu_s_median"]
        figures["restart_cpu_s"] = round(share, 1)
        print(f"one restart: {cost['cpu_s_median']} CPU-s (median of {cost['samples']}), "
              f"{cost['wall_s_median']} s; all restarts: {share:.0f} CPU-s")
        if "run" in figures and figures["run"]["machine_cpu_s"]:
            figures["restart_share"] = round(share / figures["run"]["machine_cpu_s"], 3)
            print(f"restarts: {figures['restart_share']:.0%} of the matrix's CPU")
    RESULTS.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
