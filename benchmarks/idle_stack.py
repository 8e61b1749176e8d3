"""What an idle stack costs: CPU per process while nothing runs, in % of one core.

Starts the default stack of this project (as a scenario session would),
waits until it is up, then samples every process it started (this process's
descendants, grouped as ``nightly_profile.py`` groups them) over
``--seconds`` of idleness. Polling loops show here: the app's relay,
sweeper and consumers, Celery's timers, the servers. In the mutation
matrix every session runs a stack beside the others, so this is paid once
per session for its whole wall time. Writes
``benchmarks/results/idle_stack.json``.

    .venv/bin/python benchmarks/idle_stack.py [--seconds 60]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from default_stack import default_stack  # this script's folder
from nightly_profile import by_group, descendants, processes  # this script's folder: the same /proc table

RESULTS = Path(__file__).parent / "results" / "idle_stack.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    with default_stack():
        before, started = processes(), time.monotonic()
        pids = descendants(before, os.getpid())
        time.sleep(args.seconds)  # the measurement window: the stack is left alone on purpose
        after, wall = processes(), time.monotonic() - started
    alive = {pid for pid in pids if pid in after}  # a process gone by the end has no difference to show
    spent, base = by_group(after, alive), by_group(before, alive)
    rows = {name: round((cpu - base[name]) / wall * 100, 2) for name, cpu in spent.items()}
    rows = dict(sorted(rows.items(), key=lambda kv: -kv[1]))
    for name, share in rows.items():
        print(f"{share:6.2f} % of a core  {name}")
    total = round(sum(rows.values()), 2)
    print(f"{total:6.2f} % of a core  in all, over {wall:.0f} s idle")
    RESULTS.write_text(json.dumps({"seconds": round(wall, 1), "percent_of_a_core": rows, "total": total,
                                   "load_average_after": os.getloadavg()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
