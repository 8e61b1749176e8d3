"""What one start of an app process costs: CPU-s from spawn to ready, per process of the default stack.

The matrix's sessions start app processes again and again (scenarios kill
workers, stop and start the sweeper; isolation restarts them after a broken
test), so a start's CPU is paid hundreds of times per ``mutants --full``.
Starts the default stack of this project (as a scenario session would), then
``--starts`` times per process: replaces it and reads the CPU its process
group spent by the moment it was ready (its pool children included). Two
stacks run side by side, one forking its app processes from the zygote,
one starting each as a fresh interpreter (``app_zygote = false``), in
alternating rounds. Prints the medians and writes
``benchmarks/results/app_starts.json``.

    .venv/bin/python benchmarks/app_starts.py [--starts 7]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from default_stack import default_stack  # this script's folder
from harness.stack.stack import Stack
from nightly_profile import descendants, processes  # this script's folder: the same /proc table

RESULTS = Path(__file__).parent / "results" / "app_starts.json"


def cpu_of(pid: int) -> float:
    """CPU-s of ``pid`` and its descendants (a worker's pool children), as /proc shows them now."""
    table = processes()
    return sum(table[p][2] for p in {pid, *descendants(table, pid)} if p in table)


def starts(stack: Stack, spent: dict[str, list[float]]) -> None:
    """One start of every app process of ``stack``: its CPU-s, spawn to ready, appended to ``spent``."""
    spent.setdefault("worker", []).append(cpu_of(stack.workers.replace(0).pid))  # returns once it is ready
    for name, proc in stack.processes.items():
        proc.stop()
        proc.start()  # returns once it is ready
        spent.setdefault(name, []).append(cpu_of(proc.pid))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7)
    args = parser.parse_args()
    forked: dict[str, list[float]] = {}
    fresh: dict[str, list[float]] = {}
    with default_stack("forked") as zygote_stack, default_stack("fresh", app_zygote=False) as fresh_stack:
        for _ in range(args.starts):  # alternating: both see the same machine
            starts(zygote_stack, forked)
            starts(fresh_stack, fresh)
    figures = {"starts": args.starts}
    for key, spent in (("forked_from_zygote", forked), ("fresh_interpreter", fresh)):
        figures[key] = {"median_cpu_s": {n: round(statistics.median(v), 3) for n, v in spent.items()},
                        "all": {n: [round(v, 3) for v in vs] for n, vs in spent.items()}}
    print(f"{'process':<10} {'forked':>8} {'fresh':>8}  CPU-s, spawn to ready (median of {args.starts} starts)")
    for name, median in figures["fresh_interpreter"]["median_cpu_s"].items():
        print(f"{name:<10} {figures['forked_from_zygote']['median_cpu_s'][name]:8.2f} {median:8.2f}")
    total = [sum(figures[k]["median_cpu_s"].values()) for k in ("forked_from_zygote", "fresh_interpreter")]
    figures["ratio_all_processes"] = round(total[0] / total[1], 2)
    print(f"all processes once: {total[0]:.2f} against {total[1]:.2f} CPU-s (ratio {total[0] / total[1]:.2f})")
    figures["load_average_after"] = os.getloadavg()
    RESULTS.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
