"""How long every shipped checker takes over a 100,000-event history.

A seeded synthetic run (``harness.history.synthetic``) of about 100,000
events, with every planted bug, is checked by all ten checkers. Each
repeat starts from a fresh ``History`` object, so building the per-job
indexes is part of the measured time, as it is after a real scenario.
Reports the median over N repeats (default 5), per checker and in total,
plus loading the history from JSONL and rendering the HTML timeline for
scale, and writes ``benchmarks/results/checks.json``.

    .venv/bin/python benchmarks/checks.py [--runs 5] [--events 100000]

Target: all checkers <= 2 s.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.checks import ALL_CHECKERS, checker_name, run_checks  # noqa: E402
from harness.history import History, Recorder, load  # noqa: E402
from harness.history.synthetic import BUGS, DEADLINE, synthetic_run  # noqa: E402
from harness.report import render_html  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "checks.json"
TARGET_S = 2.0
OPTIONS = {"timeout_labelled": {"deadline": DEADLINE}}


def history_of(events: int) -> tuple[History, object]:
    """A synthetic run with at least ``events`` events (about 11 events a job)."""
    jobs = events // 11
    while True:
        history, snapshot = synthetic_run(jobs=jobs, seed=7, bugs=BUGS)
        if len(history) >= events:
            return history, snapshot
        jobs = int(jobs * events / len(history)) + 1


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(history: History, snapshot, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"total": []}
    for _ in range(runs):
        fresh = History(history)
        verdict = None
        def check_all():
            nonlocal verdict
            verdict = run_checks(ALL_CHECKERS, fresh, snapshot, OPTIONS)
        times["total"].append(timed(check_all))
        for checker in ALL_CHECKERS:  # each alone, on its own fresh history: cold indexes
            alone = History(history)
            name = checker_name(checker)
            times.setdefault(name, []).append(timed(lambda: run_checks([checker], alone, snapshot, OPTIONS)))
    assert verdict is not None and verdict.valid is False, "the planted bugs must be found"
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    history, snapshot = history_of(args.events)
    times = measure(history, snapshot, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.jsonl"
        with Recorder(path) as recorder:
            recorder.extend(history)
        load_s = statistics.median(timed(lambda: load(path)) for _ in range(3))
    html_s = statistics.median(timed(lambda: render_html(history, None, snapshot, "bench")) for _ in range(3))
    medians = {name: round(statistics.median(v), 4) for name, v in times.items()}
    report = {
        "unit": f"seconds (median of {args.runs} runs)", "events": len(history),
        "jobs": len(history.jobs()), "target_s": TARGET_S, "meets_target": medians["total"] <= TARGET_S,
        "python": platform.python_version(), "machine": platform.machine(),
        "all_checkers": medians.pop("total"), "per_checker": medians,
        "note": "each per-checker figure includes building the history indexes it needs, "
                "which the all-checkers run builds once and shares",
        "load_jsonl": round(load_s, 4), "render_html": round(html_s, 4),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{report['events']} events, {report['jobs']} jobs; median of {args.runs} runs")
    print(f"  all checkers      {report['all_checkers']:.3f} s   (target <= {TARGET_S} s: "
          f"{'met' if report['meets_target'] else 'MISSED'})")
    for name, seconds in sorted(medians.items(), key=lambda kv: -kv[1]):
        print(f"    {name:<28} {seconds:.3f} s")
    print(f"  load history.jsonl {report['load_jsonl']:.3f} s")
    print(f"  render timeline    {report['render_html']:.3f} s (first 300 jobs drawn)")
    print(f"written {RESULTS.relative_to(ROOT)}")
    return 0 if report["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
