"""Where a scenario's CPU goes: the machine's CPU-s and the wall seconds of each phase of a test.

The full mutation matrix is bound by the machine's CPU (``mutants_full.py``):
its wall time is its CPU-s over the cores. This script says which part of a
test that CPU is spent in, so a change can aim at the phase that costs. It
runs ``pytest <scenarios>`` once as one session (``--runs`` more), with a
plugin (``phase_cost_plugin.py``, this folder) that reads the machine's busy
time from /proc/stat around each phase:

* setup (of it, the stack's reset: fresh database, broker, queues, routes),
* the call (of it, the settle before the verdict, and the collection of
  the evidence, the invariants, the artifacts),
* teardown, and the session outside any test (stack start and stop,
  pytest's start).

What is left of the call is the scenario itself: its uploads, faults and
waits, and the app's work they cause. Figures are the machine's (every
process: app, servers, harness), so run it on a quiet machine. Writes
``benchmarks/results/phase_cost.json``.

    .venv/bin/python benchmarks/phase_cost.py [--scenarios scenarios] [--runs 1]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "phase_cost.json"
PLUGIN = "phase_cost_plugin"  # this folder, put on the session's path
ORDER = ["session", "setup", "stack reset", "call", "settle", "evidence", "invariants", "artifacts", "teardown"]


def one_session(scenarios: str) -> dict[str, dict[str, float]]:
    """{phase: {cpu_s, wall_s, count}} of one ``pytest <scenarios>`` session (every test must pass)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "phases.json"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                                         os.environ.get("PYTHONPATH")])),
               "PHASE_COST_OUT": str(out)}
        proc = subprocess.run([sys.executable, "-m", "pytest", scenarios, "-q", "-p", PLUGIN, "-p", "no:randomly",
                               "-p", "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"the session failed (exit {proc.returncode}): nothing measured\n{proc.stdout[-3000:]}")
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="scenarios")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs = [one_session(args.scenarios) for _ in range(args.runs)]
    tests = runs[0]["call"]["count"]
    phases = {name: {"cpu_s_median": round(statistics.median(r[name]["cpu_s"] for r in runs), 1),
                     "wall_s_median": round(statistics.median(r[name]["wall_s"] for r in runs), 1)}
              for name in ORDER}
    total = phases["session"]["cpu_s_median"]
    print(f"{args.scenarios}: {tests} tests, one session, median of {args.runs} run(s)")
    print(f"{'phase':<14}{'CPU-s':>8}{'share':>8}{'per test':>10}{'wall s':>9}")
    for name, figures in phases.items():
        inner = name in ("stack reset", "settle", "evidence", "invariants", "artifacts")
        cpu = figures["cpu_s_median"]
        print(f"{('  ' if inner else '') + name:<14}{cpu:>8.1f}{100 * cpu / total:>7.0f}%{cpu / tests:>10.2f}"
              f"{figures['wall_s_median']:>9.1f}")
    scenario = phases["call"]["cpu_s_median"] - sum(phases[n]["cpu_s_median"]
                                                    for n in ("settle", "evidence", "invariants", "artifacts"))
    print(f"the scenario itself (call less the judging): {scenario:.1f} CPU-s, {scenario / tests:.2f} a test")
    args.out.write_text(json.dumps({"scenarios": args.scenarios, "tests": tests, "runs": args.runs,
                                    "cores": os.cpu_count(), "phases": phases,
                                    "scenario_itself_cpu_s": round(scenario, 1)}, indent=1))


if __name__ == "__main__":
    main()
