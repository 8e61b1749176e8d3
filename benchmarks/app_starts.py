"""What one start of an app process costs: CPU-s from spawn to ready, per process of the default stack.

The matrix's sessions start app processes again and again (scenarios kill
workers, stop and start the sweeper; isolation restarts them after a broken
test), so a start's CPU is paid hundreds of times per ``mutants --full``.
Starts the default stack of this project (as a scenario session would), then
``--starts`` times per process: replaces it and reads the CPU its process
group spent by the moment it was ready (its pool children included). Prints
the medians and writes ``benchmarks/results/app_starts.json``.

    .venv/bin/python benchmarks/app_starts.py [--starts 7]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from default_stack import default_stack  # this script's folder
from nightly_profile import descendants, processes  # this script's folder: the same /proc table

RESULTS = Path(__file__).parent / "results" / "app_starts.json"


def cpu_of(pid: int) -> float:
    """CPU-s of ``pid`` and its descendants (a worker's pool children), as /proc shows them now."""
    table = processes()
    return sum(table[p][2] for p in {pid, *descendants(table, pid)} if p in table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7)
    args = parser.parse_args()
    spent: dict[str, list[float]] = {"worker": []}
    with default_stack() as stack:
        spent.update({name: [] for name in stack.processes})
        for _ in range(args.starts):
            spent["worker"].append(cpu_of(stack.workers.replace(0).pid))  # returns once it is ready
            for name, proc in stack.processes.items():
                proc.stop()
                proc.start()  # returns once it is ready
                spent[name].append(cpu_of(proc.pid))
    medians = {name: round(statistics.median(values), 3) for name, values in spent.items()}
    for name, median in medians.items():
        print(f"{median:6.2f} CPU-s  {name}  (median of {args.starts} starts, spawn to ready)")
    RESULTS.write_text(json.dumps({"starts": args.starts, "median_cpu_s": medians,
                                   "all": {n: [round(v, 3) for v in vs] for n, vs in spent.items()},
                                   "load_average_after": os.getloadavg()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
