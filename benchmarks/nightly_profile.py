"""Where a nightly's time goes: CPU seconds per completed job, by process, over a short run.

Runs a nightly of refapp (or the app of ``--app-dir``) in this process (no faults unless ``--faults``)
and reads the CPU time of every process under it (the app's API, workers,
relay, consumers, sweeper; Postgres, Redis; the fault proxy, the paid API;
this process: workload, recorder, monitor) from /proc before and after.
CPU per job bounds throughput independently of the machine's other load:
``cores / CPU seconds per job`` is the most a quiet machine could complete.
Writes ``benchmarks/results/nightly_profile.json`` (``nightly_profile_<app folder>.json`` with ``--app-dir``).

    .venv/bin/python benchmarks/nightly_profile.py [--rate 20] [--duration 30] [--faults kill,latency] [--app-dir DIR]
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.nightly.progress import PlainProgress  # noqa: E402
from harness.nightly.report import summary  # noqa: E402
from harness.nightly.runner import NightlyRunner  # noqa: E402
from harness.nightly.schedule import draw  # noqa: E402
from harness.nightly.settings import NightlySettings  # noqa: E402
from nightly import app_config, load_parser, results_path  # noqa: E402  (benchmarks/nightly.py, this script's folder)

TICKS = os.sysconf("SC_CLK_TCK")
GROUPS = (  # first match of the command line wins
    ("zygote", ("(jobquake zygote)",)), ("worker", ("celery", "refapp.worker", "loadapp.worker")),
    ("api", ("refapp.api", "loadapp.api")),
    ("relay", ("refapp.relay", "tickets.relay")), ("consumer", ("refapp.consumer",)),
    ("sweeper", ("refapp.sweeper", "loadapp.sweeper", "tickets.sweeper")), ("postgres", ("postgres",)),
    ("redis", ("redis",)), ("sqs (moto)", ("moto",)), ("paid API", ("harness.paidapi",)),
    ("fault proxy", ("harness.proxy", "toxiproxy")),
)


def stat_fields(proc: Path) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces and parentheses):
    the state is [0], the parent [1], utime, stime, cutime, cstime [11:15]."""
    return (proc / "stat").read_text().rsplit(")", 1)[1].split()


def processes(waited_children: bool = True) -> dict[int, tuple[int, str, float]]:
    """pid -> (parent pid, command line, CPU seconds) of every process.

    ``waited_children``: a process's CPU includes that of the children it has waited for (whose
    own entries are gone); off, each process counts its own time only (no double count when every
    process of a tree is sampled while it lives).
    """
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = stat_fields(entry)
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        cpu = sum(int(f) for f in fields[11:15 if waited_children else 13]) / TICKS  # utime, stime[, cutime, cstime]
        found[int(entry.name)] = (int(fields[1]), cmd, cpu)
    return found


def waited_cpu(pids: Iterable[int]) -> dict[int, float]:
    """pid -> CPU seconds of the children it has waited for (``cutime + cstime``: gone from /proc, their
    time is their parent's to tell), for each of ``pids`` still there."""
    found = {}
    for pid in pids:
        try:
            fields = stat_fields(Path(f"/proc/{pid}"))
        except OSError:
            continue
        found[pid] = sum(int(f) for f in fields[13:15]) / TICKS
    return found


def descendants(table: dict[int, tuple[int, str, float]], root: int) -> set[int]:
    children = defaultdict(list)
    for pid, (ppid, _, _) in table.items():
        children[ppid].append(pid)
    seen, todo = set(), [root]
    while todo:
        pid = todo.pop()
        for child in children[pid]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def group_of(cmd: str) -> str:
    return next((name for name, words in GROUPS if any(w in cmd for w in words)), "other")


def by_group(table: dict[int, tuple[int, str, float]], pids: set[int]) -> dict[str, float]:
    """CPU seconds per group (a process's own time only: cutime of a child counted at the child)."""
    totals: dict[str, float] = defaultdict(float)
    for pid in pids:
        if pid in table:
            _, cmd, cpu = table[pid]
            totals[group_of(cmd)] += cpu
    return totals


def main() -> int:
    parser = load_parser(__doc__, rate=20.0, duration=30.0)
    parser.add_argument("--faults", default="")
    args = parser.parse_args()
    config = app_config(args)
    nightly = NightlySettings.from_config(config)
    kinds = [k for k in args.faults.split(",") if k]
    schedule = draw(seed=args.seed, duration=args.duration, kinds=kinds, target=nightly.target(config),
                    rate=args.rate, concurrency=args.concurrency, job_bound=nightly.job_bound)
    out = ROOT / ".jobquake" / "bench-nightly-profile"
    with NightlyRunner(config, nightly.submit_fn(config), out) as runner:
        before_table = processes()
        pids = descendants(before_table, os.getpid())
        own0, wall0 = os.times(), time.monotonic()
        outcome = runner.run_schedule(schedule, out / "run", on_tick=PlainProgress(args.duration, every=10))
        wall = time.monotonic() - wall0
        own1, after_table = os.times(), processes()
    # processes that lived through the run (a killed worker's time is lost: run without kill for this)
    before, after = by_group(before_table, pids), by_group(after_table, pids)
    used = {g: round(after[g] - before.get(g, 0.0), 2) for g in after}
    used["this process (workload, recorder, monitor, checks)"] = round(
        (own1.user + own1.system) - (own0.user + own0.system), 2)
    data = summary(outcome)
    jobs = data["jobs"]["done"] + data["jobs"]["failed"]
    total = sum(used.values())
    report = {"rate_asked": args.rate, "duration_s": args.duration, "workers": config.workers,
              "worker_concurrency": config.env.get("REFAPP_WORKER_CONCURRENCY"),
        "time_scale": config.time_scale, "wall_s": round(wall, 1), "jobs_completed": jobs,
              "cpu_s": dict(sorted(used.items(), key=lambda kv: -kv[1])), "cpu_s_total": round(total, 2),
              "cpu_ms_per_job": {g: round(1000 * s / max(jobs, 1), 1) for g, s in used.items()},
              "cpu_ms_per_job_total": round(1000 * total / max(jobs, 1), 1), "cores": os.cpu_count(),
              "ceiling_jobs_per_s": round(os.cpu_count() * jobs / total, 1) if total else None,
              "verdict": data["valid"], "load_average_1m": round(os.getloadavg()[0], 1)}
    results = results_path(args, "nightly_profile")
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{jobs} jobs completed in {wall:.0f} s; CPU per job by process (ms):")
    for group, seconds in report["cpu_s"].items():
        print(f"  {group:<52} {1000 * seconds / max(jobs, 1):7.1f}")
    print(f"  {'total':<52} {report['cpu_ms_per_job_total']:7.1f}  -> at most {report['ceiling_jobs_per_s']} jobs/s "
          f"on {os.cpu_count()} idle cores")
    print(f"written {results.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
