"""What a per-test reset costs, this checkout against another one, side by side.

A scenario pays one ``Stack.reset()`` before it starts: a fresh app database
from the template, Redis flushed, SQS reset, the proxy's routes made again
without toxics, the paid API's ledger, rules and settings, failpoints
disarmed. Each checkout's stack (the small test app, 2 workers) runs in a
process of its own, importing the harness from its own tree; both run at
once, and the resets alternate between them, so the machine's load weighs on
both alike. Each reset waits first for the next database's copy, as a test's
reset does after the test ran. Prints the medians and their ratio; writes
``benchmarks/results/reset_cost.json``.

    .venv/bin/python benchmarks/reset_cost.py --against DIR [--resets 40]

``DIR`` is another checkout (``git worktree add DIR REV``, or ``git archive
REV | tar -x -C DIR``); its harness runs with this venv's libraries.
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

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "reset_cost.json"

# runs in each tree: start the stack, then one reset per line read, answering its seconds
SERVE = """
import sys, time
from pathlib import Path
from harness.config import resolve
from harness.stack import reaper
from harness.stack.stack import Stack
config = resolve(cli={"workers": 2}, environ={}, pyproject=Path("tests/tinyapp/pyproject.toml"))
stack = Stack(config, reaper.run_dir() / "reset-cost")
stack.start()
print("ready", flush=True)
try:
    for _line in sys.stdin:
        stack.postgres._await_spare()
        started = time.perf_counter()
        stack.reset()
        print(time.perf_counter() - started, flush=True)
finally:
    stack.stop()
    reaper.remove_run_dir()
"""


def start(tree: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.Popen([sys.executable, "-c", SERVE], cwd=tree, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"the stack of {tree} did not start (exit {proc.wait()})")
    return proc


def one_reset(proc: subprocess.Popen) -> float:
    proc.stdin.write("reset\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--resets", type=int, default=40)
    args = parser.parse_args()
    trees = {"this": ROOT, "other": args.against.resolve()}
    procs = {name: start(tree) for name, tree in trees.items()}
    seconds: dict[str, list[float]] = {name: [] for name in trees}
    try:
        for i in range(args.resets):
            order = list(trees) if i % 2 else list(reversed(trees))  # neither always goes first
            for name in order:
                seconds[name].append(one_reset(procs[name]))
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait(60)
    medians = {name: statistics.median(values) * 1000 for name, values in seconds.items()}
    for name, tree in trees.items():
        print(f"{name:>5}  {tree}: median reset {medians[name]:.1f} ms, p90 "
              f"{sorted(seconds[name])[int(len(seconds[name]) * 0.9)] * 1000:.1f} ms ({args.resets} resets)")
    ratio = medians["this"] / medians["other"]
    print(f"ratio this / other: {ratio:.2f}")
    RESULTS.write_text(json.dumps({
        "resets": args.resets, "trees": {k: str(v) for k, v in trees.items()},
        "median_ms": {k: round(v, 1) for k, v in medians.items()}, "ratio_this_over_other": round(ratio, 3),
        "all_ms": {k: [round(s * 1000, 1) for s in v] for k, v in seconds.items()},
        "load_average_after": os.getloadavg(), "at": time.strftime("%Y-%m-%d %H:%M"),
    }, indent=1) + "\n")


if __name__ == "__main__":
    main()
