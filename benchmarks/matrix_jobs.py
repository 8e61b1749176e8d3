"""The full matrix at several numbers of sessions at once, one after another in this checkout.

``make mutants-full`` runs ``jobquake mutants --full --jobs 8``. Fewer
sessions at once leave each less to wait for (less CPU per pair), more keep
the cores busier. This runs ``make mutants-full JOBS=N`` for each N given,
in this checkout, one after another: every run sees the same reach history
(``.jobquake/mutants/reach-history.json``, which joins every baseline run
here, so a checkout that ran the matrix before runs more pairs than a clean
clone) and the same durations record. Per run it stores the wall time, the
machine's CPU, the pairs run, the CPU per pair and the cores' busy share
minute by minute (``targets.run_target``). Run it on a quiet machine; only
runs of one sitting compare. Writes ``benchmarks/results/matrix_jobs.json``.

    .venv/bin/python benchmarks/matrix_jobs.py [6 8 ...]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from pathlib import Path

from targets import run_target  # this script's folder: the same timing and busy share as the targets

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "matrix_jobs.json"
PAIRS = re.compile(r"pairs: (\d+) run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jobs", nargs="*", type=int, default=[6, 8], help="sessions at once, one run each")
    args = parser.parse_args()
    revision = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    runs = []
    for jobs in args.jobs:
        os.environ["JOBS"] = str(jobs)  # the Makefile's number of sessions at once
        found = run_target("mutants-full", ROOT)
        pairs = next((int(m.group(1)) for line in found["says"] if (m := PAIRS.search(line))), None)
        found.update(jobs=jobs, revision=revision, pairs_run=pairs,
                     cpu_s_per_pair=round(found["machine_cpu_s"] / pairs, 2) if pairs else None)
        (ROOT / "target-mutants-full.log").rename(ROOT / ".jobquake" / f"matrix-jobs-{jobs}.log")
        print(json.dumps({k: found[k] for k in ("jobs", "wall", "machine_cpu_s", "pairs_run", "cpu_s_per_pair")}),
              flush=True)
        runs.append(found)
    RESULTS.write_text(json.dumps(runs, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
