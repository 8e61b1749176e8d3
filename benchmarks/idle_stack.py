"""What an idle stack costs: CPU per process while nothing runs, in % of one core.

Starts the default stack of this project (as a scenario session would),
waits until it is up, then samples every process it started (this process's
descendants) over ``--seconds`` of idleness. Polling loops show here: the
app's relay, sweeper and consumers, Celery's timers, the servers. In the
mutation matrix every session runs a stack beside the others, so this is
paid once per session for its whole wall time. Writes
``benchmarks/results/idle_stack.json``.

    .venv/bin/python benchmarks/idle_stack.py [--seconds 60]
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.stack import reaper
from harness.stack.stack import Stack

RESULTS = Path(__file__).parent / "results" / "idle_stack.json"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> dict[int, tuple[str, float]]:
    """{pid: (command line, CPU seconds so far)} of those still alive."""
    found = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        found[pid] = (cmd.strip()[:120], (int(fields[11]) + int(fields[12])) / TICKS)
    return found


def label(cmd: str) -> str:
    """A short name: the module or program a process runs."""
    words = cmd.split()
    if "-m" in words and words.index("-m") + 1 < len(words):
        return words[words.index("-m") + 1] + (" worker" if "worker" in words else "")
    return Path(words[0]).name if words else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    reaper.reap()
    stack = Stack(resolve(pyproject=find_pyproject(Path.cwd())), reaper.run_dir() / "stack")
    stack.start()
    try:
        pids = [pid for pid in reaper.family(os.getpid()) if pid != os.getpid()]
        before, started = cpu_seconds(pids), time.monotonic()
        time.sleep(args.seconds)  # the measurement window: the stack is left alone on purpose
        after, wall = cpu_seconds(pids), time.monotonic() - started
    finally:
        stack.stop()
        reaper.remove_run_dir()
    rows: dict[str, float] = {}
    for pid, (cmd, cpu) in after.items():
        if pid in before:
            rows[label(cmd)] = rows.get(label(cmd), 0.0) + (cpu - before[pid][1]) / wall * 100
    rows = dict(sorted(((k, round(v, 2)) for k, v in rows.items()), key=lambda kv: -kv[1]))
    for name, share in rows.items():
        print(f"{share:6.2f} % of a core  {name}")
    total = round(sum(rows.values()), 2)
    print(f"{total:6.2f} % of a core  in all, over {wall:.0f} s idle")
    RESULTS.write_text(json.dumps({"seconds": round(wall, 1), "percent_of_a_core": rows, "total": total,
                                   "load_average_after": os.getloadavg()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
