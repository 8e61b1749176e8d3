"""What the instrumentation costs an app process: at start, per paid call, per task run.

* start: a fresh interpreter importing Celery, httpx, requests, aiohttp and
  SQLAlchemy (what a worker imports), with and without the instrumentation
  loaded; median CPU time (user + system) of several starts, alternated.
* per paid call: tagging one httpx request to the paid API (headers, the
  ``http.before_paid_call`` failpoint unarmed).
* per task run: ``task_prerun`` + ``task_postrun`` bookkeeping (job id,
  attempt counter under flock, two event lines, two unarmed failpoints).
* per pooled connection: a checkout and its check-in from a SQLAlchemy
  queue pool (SQLite in a file), with the pool watch (``_pools``: the
  checkout's site, the process's pool file rewritten twice) and without
  it, alternated.

Writes ``benchmarks/results/instrument.json``.

    .venv/bin/python benchmarks/instrument.py
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import resource
import tempfile
import time
import timeit
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "instrument.json"
IMPORTS = "import celery, celery.signals, httpx, requests, aiohttp, sqlalchemy, sqlalchemy.orm"
STARTS = 15


def start_time(env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one start: on a shared machine wall time mostly measures the others."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", IMPORTS], env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def per_call_us(folder: str) -> tuple[float, float]:
    """Median µs to tag one paid httpx request, and one task run's bookkeeping."""
    import httpx

    from harness.instrument import _celery, _context
    from harness.instrument._http import PaidCalls

    calls = PaidCalls("http://127.0.0.1:1")
    hooks = _celery.CeleryHooks(folder, "args[0]")

    class Task:
        name = "bench.task"
        request = type("Request", (), {"retries": 0, "delivery_info": {}})()

    def tag() -> None:
        calls._tag_httpx(httpx.Request("POST", "http://127.0.0.1:1/v1/generate"))

    def run() -> None:
        hooks.prerun(task=Task(), task_id="t-1", args=("job-1",), kwargs={})
        hooks.postrun(task=Task(), task_id="t-1", state="SUCCESS")

    _context.enter(_context.JobContext("job-1", 1, "bench.task", "t-1"))
    base = statistics.median(timeit.repeat(lambda: httpx.Request("POST", "http://127.0.0.1:1/v1/generate"),
                                           number=2000, repeat=7, timer=time.process_time)) / 2000
    tagged = statistics.median(timeit.repeat(tag, number=2000, repeat=7, timer=time.process_time)) / 2000
    _context.leave()
    runs = statistics.median(timeit.repeat(run, number=500, repeat=7, timer=time.process_time)) / 500
    return (tagged - base) * 1e6, runs * 1e6


def pool_checkout_us(folder: str) -> tuple[float, float]:
    """Median µs of one checkout + check-in without and with the pool watch (its listeners added and removed
    in turn, so a busy moment of the machine hits both alike)."""
    import sqlalchemy as sa
    from sqlalchemy import event
    from sqlalchemy.pool import Pool, QueuePool

    from harness.instrument._pools import PoolWatch, _not_app_prefixes

    engine = sa.create_engine(f"sqlite:///{folder}/bench.db", poolclass=QueuePool)
    watch = PoolWatch(folder)
    watch.skip = _not_app_prefixes()  # as installed: the site walk passes SQLAlchemy's frames

    def cycle() -> None:
        engine.connect().close()

    def timed() -> float:
        return min(timeit.repeat(cycle, number=2000, repeat=3, timer=time.process_time)) / 2000

    without, with_ = [], []
    for _ in range(7):
        without.append(timed())
        watch.install(sa)
        with_.append(timed())
        for name, fn in (("checkout", watch.checkout), ("checkin", watch.checkin), ("detach", watch.detach)):
            event.remove(Pool, name, fn)
    engine.dispose()
    return statistics.median(without) * 1e6, statistics.median(with_) * 1e6


def main() -> None:
    from harness.instrument.control import InstrumentControl

    plain = {k: v for k, v in os.environ.items() if not k.startswith("JOBQUAKE_")}
    with tempfile.TemporaryDirectory(prefix="jobquake-bench-") as tmp:
        control = InstrumentControl.create(tmp)
        instrumented = {**plain, **control.env(paidapi_url="http://127.0.0.1:1", job_id_from="args[0]",
                                               pythonpath=plain.get("PYTHONPATH", ""))}
        start_time(plain)  # warm the file cache
        without, with_ = [], []
        for _ in range(STARTS):  # alternated, so a busy moment of the machine hits both alike
            without.append(start_time(plain))
            with_.append(start_time(instrumented))
        call_us, run_us = per_call_us(tmp)
        plain_checkout_us, watched_checkout_us = pool_checkout_us(tmp)
    results = {"start_without_cpu_s": round(statistics.median(without), 3),
               "start_with_cpu_s": round(statistics.median(with_), 3),
               "paid_call_tagging_us": round(call_us, 1), "task_run_bookkeeping_us": round(run_us, 1),
               "pool_checkout_without_us": round(plain_checkout_us, 1),
               "pool_checkout_with_us": round(watched_checkout_us, 1),
               "pool_checkout_added_us": round(watched_checkout_us - plain_checkout_us, 1)}
    results["start_added_cpu_s"] = round(results["start_with_cpu_s"] - results["start_without_cpu_s"], 3)
    for key, value in results.items():
        print(f"{key:<26} {value}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"imports": IMPORTS, "starts": STARTS, "python": platform.python_version(),
                                   "unit": "CPU time (process_time / rusage), medians", "results": results}, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
