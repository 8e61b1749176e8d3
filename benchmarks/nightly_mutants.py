"""Nightly runs against catalogued mutants: found, shrunk, reproduced by the printed scenario, replayed.

For each mutant below, a seeded ``jobquake nightly`` (chosen so that its
schedule reaches the bug) with shrinking on; then the printed minimal
scenario under pytest on the mutant (must fail) and on the correct app (must
pass, twice); then ``jobquake nightly --replay`` of the original schedule (replay
fidelity: the same invariant fails again). Prints a table, writes
``benchmarks/results/nightly_mutants.json``.

    .venv/bin/python benchmarks/nightly_mutants.py [--only acks-early ...] [--shrink-budget 4m] [--keep DIR]

``--keep DIR`` leaves each run's folder there (the printed scenario is
``DIR/<mutant>/minimal/test_*.py``); the load average is stored per mutant.

Each mutant takes several minutes (the run, up to the shrink budget of
reruns, two scenario runs, the replay).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "nightly_mutants.json"
ALL_KINDS = "kill,hang,pool,pause,defence_off,latency,poison"
REFAPP_RUNS = 2  # the printed scenario must pass on the correct app every time, not once

CASES = {  # mutant -> (the nightly that finds it, the invariant it should fail)
    "sweep-no-isolation": (["--seed", "25", "--duration", "40s", "--faults", ALL_KINDS, "--rate", "2/s"],
                           "sweep_complete"),
    "dual-write": (["--seed", "236", "--duration", "60s", "--faults", "pool,defence_off", "--rate", "2/s"],
                   "no_job_stuck"),
    "no-sweeper": (["--seed", "344", "--duration", "60s", "--faults", "broker,kill", "--rate", "2/s"], "no_job_stuck"),
    "acks-early": (["--seed", "160", "--duration", "50s", "--faults", "kill,defence_off", "--rate", "2/s"],
                   "no_job_stuck"),
    "fresh-idempotency-key": (["--seed", "159", "--duration", "60s", "--rate", "2/s"], "no_double_billing"),
}


def env_for(mutant: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REFAPP_MUTANT"}
    if mutant:
        env["REFAPP_MUTANT"] = mutant
    return env


def nightly(args: list[str], mutant: str, out: Path) -> tuple[int, set[str]]:
    """Exit code and failed invariants of one ``jobquake nightly`` run."""
    done = subprocess.run([sys.executable, "-m", "harness.cli", "nightly", *args, "--out", str(out)],
                          cwd=ROOT, env=env_for(mutant), capture_output=True, text=True)
    (out / "stdout.txt").write_text(done.stdout + done.stderr) if out.is_dir() else None
    data = json.loads((out / "nightly.json").read_text()) if (out / "nightly.json").is_file() else {}
    failed = {r["name"] for r in data.get("verdict", {}).get("results", []) if r["valid"] is False}
    return done.returncode, failed


def scenario(path: Path, mutant: str | None, artifacts: Path) -> int:
    """pytest's exit code for the printed scenario."""
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), str(path), "-q",
                           "-p", "no:cacheprovider", f"--jobquake-artifacts={artifacts}"],
                          cwd=ROOT, env=env_for(mutant), capture_output=True, text=True).returncode


def one(mutant: str, tmp: Path, budget: str) -> dict:
    args, expected = CASES[mutant]
    began = time.monotonic()
    out = tmp / mutant
    code, failed = nightly([*args, "--shrink-budget", budget], mutant, out)
    row = {"mutant": mutant, "args": args, "expected": expected, "found": code == 1, "failed": sorted(failed)}
    shrink_file = out / "minimal" / "shrink.json"
    if shrink_file.is_file():
        shrunk = json.loads(shrink_file.read_text())
        path = out / "minimal" / shrunk["scenario"]
        on_refapp = [scenario(path, None, tmp / f"refapp-{i}") for i in range(REFAPP_RUNS)]
        row.update(shrunk_faults=shrunk["faults"], reruns=shrunk["reruns"], shrink_s=shrunk["seconds"],
                   scenario=str(path), scenario_fails_on_mutant=scenario(path, mutant, tmp / "a") == 1,
                   scenario_on_refapp_exit_codes=on_refapp,
                   scenario_passes_on_refapp=all(code == 0 for code in on_refapp))
    if code == 1:
        replay_code, replay_failed = nightly(["--replay", str(out), "--no-shrink"], mutant, out / "replay")
        row.update(replay_failed=sorted(replay_failed), same_invariant=bool(failed & replay_failed))
    row["seconds"] = round(time.monotonic() - began, 1)
    row["load_average"] = [round(x, 2) for x in os.getloadavg()]  # 1, 5, 15 min, as the mutant's run ends
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--shrink-budget", default="4m")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where to write the JSON")
    parser.add_argument("--keep", type=Path, default=None, help="keep each run's folder (and printed scenario) here")
    args = parser.parse_args()
    rows = []
    print(f"{'mutant':<24} {'found':<6} {'invariant':<20} {'faults':<7} {'reruns':<7} {'on mutant':<10} "
          f"{'on refapp':<10} {'replay':<7} seconds")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep.resolve() if args.keep else Path(tmp)
        for mutant in CASES:
            if args.only and mutant not in args.only:
                continue
            row = one(mutant, folder, args.shrink_budget)
            rows.append(row)
            print(f"{mutant:<24} {str(row['found']):<6} {','.join(row['failed']) or '-':<20} "
                  f"{row.get('shrunk_faults', '-')!s:<7} {row.get('reruns', '-')!s:<7} "
                  f"{'fails' if row.get('scenario_fails_on_mutant') else '-':<10} "
                  f"{'passes' if row.get('scenario_passes_on_refapp') else '-':<10} "
                  f"{'same' if row.get('same_invariant') else '-':<7} {row['seconds']}", flush=True)
    if args.only and args.results.is_file():  # a partial rerun: keep the other mutants' rows
        kept = [r for r in json.loads(args.results.read_text())["runs"] if r["mutant"] not in args.only]
        rows = sorted(kept + rows, key=lambda r: list(CASES).index(r["mutant"]) if r["mutant"] in CASES else 99)
    found = [r for r in rows if r["found"]]
    fidelity = sum(r.get("same_invariant", False) for r in found) / len(found) if found else None
    complete = [r["mutant"] for r in found if r.get("shrunk_faults", 99) <= 2 and r.get("scenario_fails_on_mutant")
                and r.get("scenario_passes_on_refapp")]
    report = {"mutants": len(rows), "found": len(found), "shrunk_and_reproduced": complete,
              "replay_fidelity": fidelity, "replay_target": 0.9, "runs": rows}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(report, indent=2) + "\n")
    print(f"found {len(found)}/{len(rows)}; shrunk to <= 2 faults and reproduced by the printed scenario: "
          f"{len(complete)}; replay fidelity {fidelity if fidelity is None else f'{fidelity:.0%}'}; "
          f"written {args.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
