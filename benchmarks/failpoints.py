"""Cost of a failpoint call: off, on with nothing armed, on with another name armed.

Each case runs in a fresh interpreter, so the "off" case imports
``harness.failpoints`` with the environment variable unset, as production
does. Reports the median over several timeit repeats, in ns per call, and
writes ``benchmarks/results/failpoints.json``. The armed cases (slow path,
a counter file under flock) are shown for scale.

    .venv/bin/python benchmarks/failpoints.py
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "failpoints.json"
TARGET_NS = 1000.0
CALL = 'failpoint("bench.point", job_id="job-1")'

# case -> (control dir needed, what to arm there, calls per timing, description)
CASES: dict[str, tuple[bool, dict | None, int, str]] = {
    "baseline_empty_function": (False, None, 500_000, "a plain function with the same signature"),
    "env_unset": (False, None, 500_000, "JOBQUAKE_FAILPOINTS_DIR unset (production)"),
    "env_set_nothing_armed": (True, None, 500_000, "directory configured, nothing armed"),
    "env_set_other_armed": (True, {"name": "other.point", "action": "raise", "exception": "ValueError"},
                            500_000, "directory configured, another name armed"),
    "armed_match_misses": (True, {"name": "bench.point", "action": "raise", "exception": "ValueError",
                                  "match": {"job_id": "job-2"}},
                           50_000, "this name armed, context does not match (slow path)"),
    "armed_fires_return": (True, {"name": "bench.point", "action": "return", "value": 1},
                           5_000, "this name armed and firing: flock + trigger line (slow path)"),
}
REPEATS = 7


def measure(case: str) -> float:
    """Median ns per call of ``case`` in this interpreter (environment prepared by the caller)."""
    number = CASES[case][2]
    if case == "baseline_empty_function":
        setup = "def failpoint(name, /, **context):\n    return None"
    else:
        setup = "from harness.failpoints import failpoint"
    timer = timeit.Timer(CALL, setup=setup)
    timer.timeit(number // 10)  # warm up: first refresh, imports of the slow path
    runs = timer.repeat(repeat=REPEATS, number=number)
    return statistics.median(runs) / number * 1e9


def run_case(case: str) -> float:
    needs_dir, to_arm, _, _ = CASES[case]
    env = {k: v for k, v in os.environ.items() if k != "JOBQUAKE_FAILPOINTS_DIR"}
    with tempfile.TemporaryDirectory(prefix="jobquake-bench-") as tmp:
        if needs_dir:
            from harness.failpoints.control import FailpointControl

            control = FailpointControl.create(tmp)
            env.update(control.env())
            if to_arm:
                params = dict(to_arm)
                control.arm(params.pop("name"), params.pop("action"), **params)
        out = subprocess.run([sys.executable, __file__, "--measure", case], env=env,
                             capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(measure(args.measure))
        return
    results = {case: run_case(case) for case in CASES}
    print(f"{'case':<26} {'ns/call':>10}  description")
    for case, ns in results.items():
        print(f"{case:<26} {ns:>10.1f}  {CASES[case][3]}")
    unarmed = ("env_unset", "env_set_nothing_armed", "env_set_other_armed")
    worst = max(results[c] for c in unarmed)
    verdict = "meets" if worst < TARGET_NS else "MISSES"
    print(f"worst unarmed case: {worst:.1f} ns/call; {verdict} the {TARGET_NS:.0f} ns target")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "unit": "ns per call (median of %d timeit repeats)" % REPEATS,
        "call": CALL, "target_ns_unarmed": TARGET_NS, "meets_target": worst < TARGET_NS,
        "python": platform.python_version(), "machine": platform.machine(),
        "results": {case: round(ns, 1) for case, ns in results.items()},
        "descriptions": {case: spec[3] for case, spec in CASES.items()},
    }, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
