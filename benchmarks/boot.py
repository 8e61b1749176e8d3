"""How long the embedded stack takes to be ready, and what a per-test reset costs.

Measured in one run, side by side, median of N (default 5):

* ready stack, cold: Redis + Postgres + SQS (moto) + proxy + paid API + 2 Celery
  workers (the small test app in tests/tinyapp), with an empty template cache,
  so Postgres runs initdb;
* ready stack, warm: the same with the template cluster cached; and the same
  again with the session's cluster on disk instead of in memory
  (``JOBQUAKE_MEMORY_DIR=``), to show what the tmpfs is worth;
* per-test reset: fresh app database from the template, Redis flushed, SQS
  reset, proxy reset, paid-API ledger cleared, failpoints disarmed (the next
  database is copied in the background while a test runs, so each timing
  starts once that copy is done, as it is after a real test);
* Postgres alone: jobquake's PostgresService (warm: copy the cached cluster and
  start, until it answers; and until the template and app databases exist) against pytest-postgresql's
  process executor (initdb + pg_ctl start, as its ``postgresql_proc`` fixture
  does), interleaved, both with their data directory in the same place (in
  memory, where jobquake puts it: ``reaper.memory_dir()``), so the disk does
  not decide the comparison. As root both run the server as the unprivileged
  ``postgres`` user (pytest-postgresql through a pg_ctl wrapper calling setpriv);
* the proxy's added latency and throughput (``benchmarks/proxy.py``);
* SQS alone, moto against LocalStack (``sqs = "localstack"``, when installed),
  interleaved: until it answers SQS calls, and a per-test reset of it after
  an app made its own two queues (with a redrive policy) and left a message;
* with ``--sqs-scenarios``: the wall time of ``pytest scenarios/test_sqs.py``
  on each (a few minutes).

    .venv/bin/python benchmarks/boot.py [--runs 5] [--sqs-scenarios]

prints a table and writes ``benchmarks/results/boot.json``.
Targets: warm <= 1.5 s, cold <= 3 s, reset <= 300 ms, proxy <= 1 ms and >= 3,000 req/s.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from harness._ports import free_port, release_port  # noqa: E402
from harness.config import resolve  # noqa: E402
from harness.stack import reaper  # noqa: E402
from harness.stack.localstack import LocalStackSQS, localstack_installed  # noqa: E402
from harness.stack.postgres import PostgresService, find_postgres_bindir, unprivileged_user  # noqa: E402
from harness.stack.sqs import SQSService  # noqa: E402
from harness.stack.stack import Stack  # noqa: E402

TINYAPP = ROOT / "tests" / "tinyapp" / "pyproject.toml"
RESULTS = ROOT / "benchmarks" / "results" / "boot.json"


def time_ready_stack(config, resets: int) -> tuple[float, list[float]]:
    """Seconds to a ready stack built from ``config``, and the cost of each of ``resets`` resets."""
    stack = Stack(config, reaper.run_dir() / f"boot-{time.monotonic_ns()}")
    started = time.perf_counter()
    stack.start()
    ready = time.perf_counter() - started
    costs = []
    for _ in range(resets):
        # a test runs between two resets, and the next database is copied meanwhile:
        # wait for that copy so the timing is what a test's set-up actually pays
        stack.postgres._await_spare()
        t0 = time.perf_counter()
        stack.reset()
        costs.append(time.perf_counter() - t0)
    stack.stop()
    for svc in stack.infrastructure:
        release_port(svc.port)
    # the process backend leaves its copied cluster in the run folder; containers keep theirs in a volume
    shutil.rmtree(getattr(stack.postgres, "datadir", ""), ignore_errors=True)
    return ready, costs


def time_stack(cold: bool, resets: int, on_disk: bool = False) -> tuple[float, list[float]]:
    """The embedded stack of the small test app with 2 workers; ``cold``: empty template cache;
    ``on_disk``: the session's Postgres cluster on disk instead of in memory."""
    cache = tempfile.mkdtemp(prefix="jobquake-cold-cache-") if cold else None
    settings = {"JOBQUAKE_CACHE_DIR": cache} if cache else {}
    if on_disk:
        settings[reaper.MEMORY_DIR_ENV] = ""
    try:
        with mock.patch.dict(os.environ, settings):  # restores what the caller had set
            return time_ready_stack(resolve(cli={"workers": 2}, environ={}, pyproject=TINYAPP), resets)
    finally:
        if cache:
            shutil.rmtree(cache, ignore_errors=True)


def time_jobquake_postgres() -> tuple[float, float]:
    """Seconds until the server answers (as pytest-postgresql's number), and until the
    template and app databases exist too."""
    svc = PostgresService("postgres", port=free_port(), workdir=reaper.run_dir() / "boot-pg")
    started = time.perf_counter()
    svc.prepare()
    svc.spawn()
    svc.wait_ready()
    answers = time.perf_counter() - started
    svc.after_ready()
    with_databases = time.perf_counter() - started
    svc.stop()
    svc.remove_data()
    release_port(svc.port)
    return answers, with_databases


def time_pytest_postgresql() -> float:
    """pytest-postgresql's process executor: initdb + pg_ctl start, as its ``postgresql_proc`` does."""
    from pytest_postgresql.executors.proc import PostgreSQLExecutor

    pg_ctl = str(find_postgres_bindir() / "pg_ctl")
    tmp = Path(tempfile.mkdtemp(prefix="pytest-postgresql-", dir=reaper.memory_dir()))
    user = unprivileged_user()
    if user:  # pg_ctl refuses root and pytest-postgresql cannot switch users: wrap pg_ctl
        tmp.chmod(0o755)
        shutil.chown(tmp, user)
        wrapper = tmp / "pg_ctl"
        wrapper.write_text(f'#!/bin/sh\nexec setpriv --reuid={user} --regid={user} --init-groups -- {pg_ctl} "$@"\n')
        wrapper.chmod(0o755)
        pg_ctl = str(wrapper)
    port = free_port()
    ex = PostgreSQLExecutor(executable=pg_ctl, host="127.0.0.1", port=port, datadir=str(tmp / "data"),
                            unixsocketdir=str(tmp), logfile=str(tmp / "pg.log"), startparams="-w",
                            dbname="tests")
    started = time.perf_counter()
    ex.start()
    ex.wait_for_postgres()
    elapsed = time.perf_counter() - started
    ex.stop()
    release_port(port)
    shutil.rmtree(tmp, ignore_errors=True)
    return elapsed


def time_sqs(cls: type[SQSService], resets: int) -> tuple[float, list[float]]:
    """Seconds until the SQS server answers SQS calls, and the cost of each of ``resets`` resets, each
    after the app made its queue and dead-letter queue (as refapp does) and left a message."""
    svc = cls("sqs", port=free_port(), workdir=reaper.run_dir() / f"boot-sqs-{cls.sqs_service}-{time.monotonic_ns()}")
    started = time.perf_counter()
    svc.start()
    ready = time.perf_counter() - started
    costs = []
    sqs = svc.client()
    for _ in range(resets):
        dlq = sqs.create_queue(QueueName="app-dlq")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        url = sqs.create_queue(QueueName="app-jobs", Attributes={
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": "4"})})["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="left by a test")
        t0 = time.perf_counter()
        svc.reset()
        costs.append(time.perf_counter() - t0)
    svc.stop()
    release_port(svc.port)
    return ready, costs


def time_sqs_scenarios(server: str) -> float:
    """Wall time of ``pytest scenarios/test_sqs.py`` with ``--jobquake-sqs server``; raises if it fails."""
    import subprocess

    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "scenarios/test_sqs.py", "-q", "-p", "no:cacheprovider",
                    f"--jobquake-sqs={server}", f"--jobquake-artifacts=.jobquake/artifacts-boot-{server}"],
                   cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def sqs_main(args: argparse.Namespace, servers: list[type[SQSService]]) -> int:
    """``--sqs-only``: SQS ready and reset on each server, interleaved, and the scenarios if asked."""
    ready: dict[str, list[float]] = {cls.sqs_service: [] for cls in servers}
    resets: dict[str, list[float]] = {cls.sqs_service: [] for cls in servers}
    for _ in range(args.runs):
        for cls in servers:
            took, costs = time_sqs(cls, args.resets)
            ready[cls.sqs_service].append(took)
            resets[cls.sqs_service].extend(costs)
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_1min": os.getloadavg()[0],
        "runs": args.runs,
        "sqs_ready_s": {name: {"median": median(v), "all": v} for name, v in ready.items()},
        "sqs_reset_s": {name: {"median": median(v), "max": max(v), "n": len(v)} for name, v in resets.items()},
    }
    if args.sqs_scenarios:
        result["sqs_scenarios_wall_s"] = {name: time_sqs_scenarios(name) for name in ready}
    out = RESULTS.with_name("boot_sqs.json")
    out.write_text(json.dumps(result, indent=1))
    print(f"median of {args.runs} runs, {result['machine']['cpus']} cpus, load {result['load_average_1min']:.1f}")
    print_sqs_rows(result)
    reaper.remove_run_dir()
    return 0


def median(values: list[float]) -> float:
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resets", type=int, default=10, help="resets timed per warm stack")
    parser.add_argument("--sqs-scenarios", action="store_true", help="also time scenarios/test_sqs.py on each SQS server")
    parser.add_argument("--sqs-only", action="store_true",
                        help="only the SQS rows (moto vs LocalStack), stored in boot_sqs.json")
    args = parser.parse_args(argv)
    sqs_servers = [SQSService, LocalStackSQS] if localstack_installed() else [SQSService]
    sqs_ready: dict[str, list[float]] = {cls.sqs_service: [] for cls in sqs_servers}
    sqs_resets: dict[str, list[float]] = {cls.sqs_service: [] for cls in sqs_servers}
    reaper.reap()
    if args.sqs_only:
        return sqs_main(args, sqs_servers)
    time_stack(cold=False, resets=0)  # fill the template cache once, outside the measurement
    cold, warm, warm_disk, resets, ours_pg, ours_pg_dbs, theirs_pg = [], [], [], [], [], [], []
    for _ in range(args.runs):  # interleaved, so a noisy moment hits every column alike
        cold.append(time_stack(cold=True, resets=0)[0])
        ready, costs = time_stack(cold=False, resets=args.resets)
        warm.append(ready)
        warm_disk.append(time_stack(cold=False, resets=0, on_disk=True)[0])
        resets.extend(costs)
        answers, with_databases = time_jobquake_postgres()
        ours_pg.append(answers)
        ours_pg_dbs.append(with_databases)
        theirs_pg.append(time_pytest_postgresql())
        for cls in sqs_servers:
            ready, costs = time_sqs(cls, args.resets)
            sqs_ready[cls.sqs_service].append(ready)
            sqs_resets[cls.sqs_service].extend(costs)
    from proxy import measure_proxy

    proxy = measure_proxy()
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "postgres_data_in": str(reaper.memory_root() or reaper.RUNS_DIR),
        "runs": args.runs,
        "stack_ready_cold_s": {"median": median(cold), "all": cold, "target": 3.0},
        "stack_ready_warm_s": {"median": median(warm), "all": warm, "target": 1.5},
        "stack_ready_warm_cluster_on_disk_s": {"median": median(warm_disk), "all": warm_disk},
        "reset_s": {"median": median(resets), "max": max(resets), "n": len(resets), "target": 0.3},
        "postgres_jobquake_warm_s": {"median": median(ours_pg), "all": ours_pg},
        "postgres_jobquake_warm_with_databases_s": {"median": median(ours_pg_dbs), "all": ours_pg_dbs},
        "postgres_pytest_postgresql_s": {"median": median(theirs_pg), "all": theirs_pg},
        "proxy": proxy,
        "sqs_ready_s": {name: {"median": median(v), "all": v} for name, v in sqs_ready.items()},
        "sqs_reset_s": {name: {"median": median(v), "max": max(v), "n": len(v)} for name, v in sqs_resets.items()},
    }
    if args.sqs_scenarios:
        result["sqs_scenarios_wall_s"] = {name: time_sqs_scenarios(name) for name in sqs_ready}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    print_table(result)
    reaper.remove_run_dir()
    return 0


def print_table(r: dict) -> None:
    rows = [
        ("ready stack, cold (initdb)", r["stack_ready_cold_s"]["median"], "<= 3.0 s"),
        ("ready stack, warm (template cached)", r["stack_ready_warm_s"]["median"], "<= 1.5 s"),
        ("  ... with the cluster on disk", r["stack_ready_warm_cluster_on_disk_s"]["median"], ""),
        ("per-test reset", r["reset_s"]["median"], "<= 0.3 s"),
        ("Postgres: jobquake (warm), answers", r["postgres_jobquake_warm_s"]["median"], ""),
        ("  ... and template + app databases made", r["postgres_jobquake_warm_with_databases_s"]["median"], ""),
        ("Postgres: pytest-postgresql proc", r["postgres_pytest_postgresql_s"]["median"], ""),
    ]
    print(f"median of {r['runs']} runs, {r['machine']['cpus']} cpus; Postgres data in {r['postgres_data_in']}")
    for name, value, target in rows:
        print(f"  {name:<40} {value * 1000:8.0f} ms   {target}")
    ratio = r["postgres_pytest_postgresql_s"]["median"] / r["postgres_jobquake_warm_s"]["median"]
    print(f"  {'Postgres: pytest-postgresql / jobquake':<40} {ratio:8.2f} x")
    print_sqs_rows(r)
    p = r["proxy"]
    print(f"  proxy: {json.dumps({k: v for k, v in p.items() if not isinstance(v, (list, dict))})}")


def print_sqs_rows(r: dict) -> None:
    for what, key in (("SQS ready", "sqs_ready_s"), ("SQS per-test reset", "sqs_reset_s")):
        cells = "   ".join(f"{name} {v['median'] * 1000:6.0f} ms" for name, v in r.get(key, {}).items())
        print(f"  {what + ', side by side':<40} {cells}")
    if "sqs_scenarios_wall_s" in r:
        cells = "   ".join(f"{name} {v:6.1f} s" for name, v in r["sqs_scenarios_wall_s"].items())
        print(f"  {'scenarios/test_sqs.py wall time':<40} {cells}")


if __name__ == "__main__":
    sys.exit(main())
