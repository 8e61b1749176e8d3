"""Sustained load through the embedded stack with faults on: jobs/s, the harness's CPU share, check time.

A nightly run of refapp at ``--rate`` jobs/s for ``--duration`` seconds
with the default fault kinds, in this process (as ``jobquake nightly``
runs it). Reported: jobs completed per second over the run, the CPU time
of the harness's own processes (this one: workload, recorder, monitor,
checker; plus the fault proxy and the paid API servers) as a share of the
machine (all cores) over the run, and the end of the run: collecting the
evidence (the ledger, the logs' tail, the snapshot), then the check over the
whole history, and their sum. Writes ``benchmarks/results/nightly.json`` (``nightly_<app folder>.json`` with ``--app-dir``).

    .venv/bin/python benchmarks/nightly.py [--rate 50] [--duration 120] [--seed 1] [--app-dir DIR]

refapp costs about 80 ms of CPU per job in its own processes, so it cannot
reach the load target on 2 cores; ``--app-dir benchmarks/loadapp`` runs
the lean app made for this benchmark (a few ms per job) with its own
faults (``[tool.jobquake.nightly]`` there).

Targets (on a quiet 2-core machine, for 10 minutes): >= 50 jobs/s,
harness CPU < 10 %, end of the run (collection + check) < 5 s.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import config as cfg  # noqa: E402
from harness.nightly.progress import PlainProgress  # noqa: E402
from harness.nightly.report import summary  # noqa: E402
from harness.nightly.runner import NightlyRunner  # noqa: E402
from harness.nightly.schedule import draw  # noqa: E402
from harness.nightly.settings import NightlySettings  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "nightly.json"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of a process (0 if it is gone)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def harness_cpu(runner: NightlyRunner) -> dict[str, float]:
    stack = runner._stack
    own = os.times()
    return {"this process": own.user + own.system, "proxy": cpu_seconds(stack.proxy.pid),
            "paid API": cpu_seconds(stack.paidapi.pid)}


def app_config(args: argparse.Namespace) -> cfg.Config:
    """The app's configuration (refapp's unless ``--app-dir``), with the worker count and concurrency asked for."""
    cli = {"seed": args.seed, "workers": args.workers, "time_scale": args.time_scale}
    pyproject = (args.app_dir.resolve() if args.app_dir else ROOT) / "pyproject.toml"
    if not pyproject.is_file():
        sys.exit(f"--app-dir {args.app_dir}: no pyproject.toml there (the app's [tool.jobquake] section)")
    config = cfg.resolve(cli=cli, pyproject=pyproject)
    if args.worker_concurrency:
        env = {**config.env, "REFAPP_WORKER_CONCURRENCY": str(args.worker_concurrency)}
        config = dataclasses.replace(config, env=env)
    return config


def results_path(args: argparse.Namespace, stem: str = "nightly") -> Path:
    """benchmarks/results/<stem>.json for refapp, <stem>_<app folder>.json for another app."""
    suffix = f"_{args.app_dir.resolve().name}" if args.app_dir else ""
    return RESULTS.parent / f"{stem}{suffix}.json"


def load_parser(doc: str, *, rate: float, duration: float) -> argparse.ArgumentParser:
    """The load benchmarks' shared options (this script's and nightly_profile.py's): rate, app size, seed."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=rate)
    parser.add_argument("--duration", type=float, default=duration)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--app-dir", type=Path, default=None,
                        help="the app's project folder, its pyproject.toml holding [tool.jobquake] and "
                             "[tool.jobquake.nightly] (default: refapp); benchmarks/loadapp is a lean app "
                             "made for this benchmark")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (config: workers)")
    parser.add_argument("--worker-concurrency", type=int, default=None,
                        help="Celery prefork children per worker (refapp: REFAPP_WORKER_CONCURRENCY)")
    parser.add_argument("--time-scale", type=float, default=None,
                        help="the app's time scale (config time_scale, 0.01): its polling and latencies scale with it")
    return parser


def main() -> int:
    parser = load_parser(__doc__, rate=50.0, duration=120.0)
    args = parser.parse_args()
    config = app_config(args)
    nightly = NightlySettings.from_config(config)
    schedule = draw(seed=args.seed, duration=args.duration, kinds=nightly.faults, target=nightly.target(config),
                    rate=args.rate, concurrency=args.concurrency, job_bound=nightly.job_bound)
    out = ROOT / ".jobquake" / "bench-nightly"
    load_before, loads = os.getloadavg()[0], []
    progress = PlainProgress(args.duration, every=15)

    def on_tick(status):  # the machine's load while the run goes on, beside the progress lines
        loads.append(os.getloadavg()[0])
        progress(status)

    with NightlyRunner(config, nightly.submit_fn(config), out, nightly.sweep_hooks(config)) as runner:
        before, wall0 = harness_cpu(runner), time.monotonic()
        outcome = runner.run_schedule(schedule, out / "run", on_tick=on_tick)
        wall = time.monotonic() - wall0
        after = harness_cpu(runner)
    data = summary(outcome)
    used = {k: round(after[k] - before[k], 2) for k in after}
    share = sum(used.values()) / (wall * os.cpu_count())
    report = {
        "rate_asked": args.rate, "duration_s": args.duration, "workers": config.workers,
        "worker_concurrency": config.env.get("REFAPP_WORKER_CONCURRENCY"),
        "time_scale": config.time_scale, "wall_s": round(wall, 1), "seed": args.seed,
        "faults": len(schedule.faults), "faults_injected": sum(1 for f in data["faults"] if f["injected"]),
        "jobs_accepted": data["jobs"]["accepted"], "jobs_done": data["jobs"]["done"],
        "jobs_failed": data["jobs"]["failed"], "sustained_jobs_per_s": data["jobs"]["throughput"],
        "p50_s": data["jobs"]["p50_s"], "p99_s": data["jobs"]["p99_s"],
        "completed_by_end_of_settle": data["jobs"]["done"] + data["jobs"]["failed"],
        "harness_cpu_s": used, "harness_cpu_share": round(share, 4), "cores": os.cpu_count(),
        "end_of_run_check_s": outcome.check_s, "evidence_collect_s": outcome.extra["collect_s"],
        "end_of_run_s": round(outcome.extra["collect_s"] + outcome.check_s, 3),
        "history_events": len(outcome.history),
        "verdict": data["valid"], "python": platform.python_version(),
        "load_average_1m": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "load_average_1m_max": round(max(loads, default=0.0), 1),
        "harness_cpu_ms_per_job": {k: round(1000 * v / max(data["jobs"]["accepted"], 1), 2) for k, v in used.items()},
        "app_dir": str(args.app_dir or "."),
        "note": "measured on a machine shared with other work; the targets are for 10 minutes on a quiet one",
    }
    results = results_path(args)
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{report['jobs_accepted']} jobs accepted in {args.duration:g} s at {args.rate:g}/s asked, "
          f"{report['faults_injected']} faults injected; verdict {report['verdict']}")
    print(f"  sustained           {report['sustained_jobs_per_s']:.1f} jobs/s completed while submitting "
          f"(target >= 50); {report['completed_by_end_of_settle']} completed by the end")
    print(f"  harness CPU         {share:.1%} of {os.cpu_count()} cores ({used}) (target < 10 %)")
    print(f"  end of the run      {report['end_of_run_s']:.2f} s (target < 5 s): collecting the evidence "
          f"{outcome.extra['collect_s']:.2f} s, then the check {outcome.check_s:.2f} s over "
          f"{len(outcome.history)} events")
    print(f"  harness CPU per job {report['harness_cpu_ms_per_job']} ms (target <= 4 ms in all)")
    print(f"  machine load (1 min) {report['load_average_1m']} before / after, {report['load_average_1m_max']} "
          f"at most during the run, {os.cpu_count()} cores")
    print(f"written {results.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
