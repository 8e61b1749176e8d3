"""Replay fidelity: does a nightly failure fail again, with the same invariant, when replayed?

For each mutant, a seeded nightly run that finds it (the seed, duration and
fault kinds below were chosen so that the schedule reaches the bug), then
``jobquake nightly --replay`` of its stored schedule. Fidelity is the
fraction of found failures whose replay fails with the same invariant(s).
Writes ``benchmarks/results/nightly_replay.json``.

    .venv/bin/python benchmarks/nightly_replay.py [--only acks-early ...]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "nightly_replay.json"

CASES = {  # mutant -> the nightly that finds it
    "fresh-idempotency-key": ["--seed", "159", "--duration", "60s",
                              "--faults", "kill,hang,pool,pause,defence_off,latency"],
    "acks-early": ["--seed", "160", "--duration", "50s", "--faults", "kill,defence_off"],
}


def nightly(args: list[str], out: Path) -> tuple[int, set[str]]:
    """Exit code and failed invariants of one ``jobquake nightly`` run."""
    code = subprocess.run([sys.executable, "-m", "harness.cli", "nightly", *args, "--no-shrink", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True).returncode
    data = json.loads((out / "nightly.json").read_text()) if (out / "nightly.json").is_file() else {}
    failed = {r["name"] for r in data.get("verdict", {}).get("results", []) if r["valid"] is False}
    return code, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mutant, run_args in CASES.items():
            if args.only and mutant not in args.only:
                continue
            began = time.monotonic()
            out = Path(tmp) / mutant
            code, failed = nightly([*run_args, "--mutant", mutant], out)
            replay_code, replay_failed = nightly(["--replay", str(out), "--mutant", mutant], out / "replay")
            row = {"mutant": mutant, "args": run_args, "found": code == 1, "failed": sorted(failed),
                   "replay_failed": sorted(replay_failed),
                   "same_invariant": code == 1 and bool(failed & replay_failed),
                   "seconds": round(time.monotonic() - began, 1)}
            rows.append(row)
            print(f"{mutant:<24} found={row['found']} {row['failed']}  replay {row['replay_failed']}  "
                  f"same={row['same_invariant']}  ({row['seconds']} s)", flush=True)
    found = [r for r in rows if r["found"]]
    fidelity = sum(r["same_invariant"] for r in found) / len(found) if found else None
    report = {"mutants": len(rows), "found": len(found), "replayed_same_invariant": fidelity, "runs": rows,
              "target": 0.9}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"replay fidelity: {fidelity if fidelity is None else f'{fidelity:.0%}'} over {len(found)} found "
          f"failure(s) of {len(rows)} mutant(s); written {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
