"""Scale out: several shards of one run, each with its own stack and a seed derived from the run seed.

``-n K`` starts K ``jobquake nightly --shard i/K`` processes here and merges
their reports; ``--shard i/n`` runs one shard (a CI matrix job, a Kubernetes
Indexed Job pod); ``jobquake merge DIR...`` builds one report from the
shards' folders. A merged run is valid when every shard is, invalid when
any is, and unknown otherwise.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.checks.result import mark, merge_valid

PASSED_ON = ("duration", "faults", "rate", "concurrency", "job_bound", "fault_every", "mutant")
TIMES = ("duration", "fault_every")


def shard_command(args: argparse.Namespace, seed: int, index: int, count: int, out: Path) -> list[str]:
    """The ``jobquake nightly`` command line of one shard (no shrinking: merge reports the failures)."""
    cmd = [sys.executable, "-m", "harness.cli", "nightly", "--seed", str(seed), "--shard", f"{index}/{count}",
           "--out", str(out), "--no-shrink"]
    for key in PASSED_ON:
        value = getattr(args, key, None)
        if value is not None:
            cmd += [f"--{key.replace('_', '-')}", f"{value:g}s" if key in TIMES else str(value)]
    return cmd


def run_local(args: argparse.Namespace, config: Any) -> int:
    """Run ``args.shards`` shards as subprocesses at once; merge their reports into the run folder."""
    count = args.shards
    root = Path(args.out or config.root / ".jobquake" / "nightly" / f"seed-{config.seed}-x{count}")
    root.mkdir(parents=True, exist_ok=True)
    procs = []
    for index in range(count):
        folder = root / f"shard-{index}"
        log = (root / f"shard-{index}.log").open("w")
        procs.append((subprocess.Popen(shard_command(args, config.seed, index, count, folder), stdout=log,
                                       stderr=subprocess.STDOUT, cwd=config.root), log, folder))
        print(f"shard {index}/{count}: log {root / f'shard-{index}.log'}", flush=True)
    codes = []
    for proc, log, _folder in procs:
        codes.append(proc.wait())
        log.close()
    print(f"shards exited {codes}", flush=True)
    return merge([folder for _p, _l, folder in procs], root)


def _load(folder: Path) -> dict[str, Any]:
    path = folder / "nightly.json"
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no nightly.json (did this shard finish?)")
    data = json.loads(path.read_text())
    if "runs" in data:  # already a merged report
        raise ValueError(f"{folder}: a merged report; give the shards' own folders")
    return data


def merge(folders: list[Path], out: Path | None = None) -> int:
    """One nightly.json and report.html over several shards' folders; the merged exit code."""
    from harness.nightly.report import write_html

    runs = []
    for folder in folders:
        try:
            runs.append(_load(Path(folder)))
        except (OSError, ValueError) as exc:
            print(f"jobquake merge: {exc}", file=sys.stderr)
            return 2
    out = Path(out) if out is not None else Path(folders[0]).parent
    out.mkdir(parents=True, exist_ok=True)
    valid = merge_valid(r["valid"] for r in runs)
    totals = {key: sum(r["jobs"].get(key) or 0 for r in runs)
              for key in ("submitted", "accepted", "done", "failed", "stuck", "in_transit", "duplicate_calls")}
    merged = {"valid": valid, "exit_code": {True: 0, False: 1}.get(valid, 2), "shards": len(runs),
              "jobs": totals, "faults_injected": sum(bool(f.get("injected")) for r in runs for f in r["faults"]),
              "runs": runs}
    (out / "nightly.json").write_text(json.dumps(merged, indent=1, default=str))
    report = write_html(runs, out / "report.html")
    print(f"merged {len(runs)} shard(s): {mark(valid)}; {totals['accepted']} jobs accepted, "
          f"{totals['stuck']} stuck, {totals['duplicate_calls']} billed twice; report: {report}")
    for r in runs:
        failed = [x["name"] for x in r["verdict"]["results"] if x["valid"] is False]
        replay = f" ({', '.join(failed)}); replay: jobquake nightly --replay {Path(r['artifacts']).parent}"
        print(f"  shard {r.get('shard') or '-'} seed {r['seed']}: {mark(r['valid'])}" + (replay if failed else ""))
    return merged["exit_code"]
