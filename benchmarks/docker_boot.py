"""How long the docker backend takes to a ready stack, and how it compares with testcontainers-python.

Measured in one run, interleaved, median of N (default 5), images already built
(``scripts/build-images.sh``), every container on the host network:

* ready docker stack: Redis + Postgres + SQS (moto) + proxy + paid API + 2 Celery
  workers of the small test app (tests/tinyapp), each a container;
* per-test reset on that stack, timed as a test pays it (the next database is copied while a test runs);
* Redis + Postgres alone, from the same images (jobquake/redis, jobquake/postgres):
  - jobquake's docker backend, started in parallel as the stack does: until both
    answer (the same work as the others), and until Postgres also holds its
    template and app databases (what the stack needs before a test, work the
    others skip);
  - testcontainers-python, one after the other, as ``with A() as a, B() as b`` does;
  - testcontainers-python, the two started in parallel threads.
  testcontainers runs with Ryuk disabled (``TESTCONTAINERS_RYUK_DISABLED=true``) and
  waits on the servers' "ready" log lines polled every 10 ms (its default is 1 s).
  Timings include making the engine client(s), as a fresh test session would.

    .venv/bin/python benchmarks/docker_boot.py [--runs 5]

prints a table and writes ``benchmarks/results/docker_boot.json``.
Targets: ready docker stack <= 10 s; jobquake no slower than testcontainers for Redis + Postgres.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"  # read when testcontainers is imported

from harness._ports import free_port, release_port  # noqa: E402
from harness.config import resolve  # noqa: E402
from harness.stack import reaper  # noqa: E402
from harness.stack.docker import DockerBackend  # noqa: E402
from boot import time_ready_stack  # noqa: E402

TINYAPP = ROOT / "tests" / "tinyapp" / "pyproject.toml"
RESULTS = ROOT / "benchmarks" / "results" / "docker_boot.json"
POLL_INTERVAL = 0.01


def time_stack(resets: int) -> tuple[float, list[float]]:
    """Seconds to a ready docker stack (the small test app, 2 workers), and each reset's cost."""
    return time_ready_stack(resolve(cli={"workers": 2, "backend": "docker"}, environ={}, pyproject=TINYAPP), resets)


def time_jobquake_pair() -> tuple[float, float]:
    """Redis and Postgres containers of the docker backend started in parallel: seconds until both
    answer, and until Postgres also holds its template and app databases (the stack's full start)."""
    started = time.perf_counter()
    backend = DockerBackend(resolve(cli={"backend": "docker"}, environ={}))
    workdir = reaper.run_dir() / "docker-boot-pair"
    services = [backend.redis("redis", port=free_port(), workdir=workdir),
                backend.postgres("postgres", port=free_port(), workdir=workdir)]

    def start_one(svc) -> None:
        svc.prepare()
        svc.spawn()
        svc.wait_ready()

    threads = [threading.Thread(target=start_one, args=(svc,)) for svc in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if not all(svc.is_ready() for svc in services):
        raise RuntimeError("a jobquake container did not start")
    answering = time.perf_counter() - started
    for svc in services:
        svc.after_ready()
    with_databases = time.perf_counter() - started
    for svc in services:
        svc.stop()
        release_port(svc.port)
    backend.close()
    return answering, with_databases


def _testcontainers_pair() -> tuple[list, list[int]]:
    """The same two images and commands, as testcontainers generic containers."""
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    def container(image: str, command: list[str], ready: str) -> DockerContainer:
        wait = LogMessageWaitStrategy(ready).with_poll_interval(POLL_INTERVAL).with_startup_timeout(30)
        return (DockerContainer(image).with_command(command)
                .with_kwargs(network_mode="host").waiting_for(wait))

    redis_port, pg_port = free_port(), free_port()
    return [
        container("jobquake/redis", ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port),
                                     "--save", "", "--appendonly", "no"], "Ready to accept connections"),
        container("jobquake/postgres", ["postgres", "-h", "127.0.0.1", "-p", str(pg_port)],
                  "database system is ready to accept connections"),
    ], [redis_port, pg_port]


def time_testcontainers_pair(parallel: bool) -> float:
    started = time.perf_counter()
    containers, ports = _testcontainers_pair()
    if parallel:
        threads = [threading.Thread(target=c.start) for c in containers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    else:
        for c in containers:
            c.start()
    elapsed = time.perf_counter() - started
    for c in containers:
        if c.get_wrapped_container() is None:
            raise RuntimeError("a testcontainers container did not start")
        c.stop()
    for port in ports:
        release_port(port)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resets", type=int, default=10, help="resets timed per stack")
    args = parser.parse_args(argv)
    DockerBackend(resolve(cli={"backend": "docker"}, environ={})).reap()
    time_jobquake_pair()  # first touch of each image's layers, outside the measurement
    time_testcontainers_pair(parallel=False)
    stack, resets, ours, ours_db, tc_seq, tc_par = [], [], [], [], [], []
    for _ in range(args.runs):  # interleaved, so a noisy moment hits every column alike
        ready, costs = time_stack(args.resets)
        stack.append(ready)
        resets.extend(costs)
        answering, with_databases = time_jobquake_pair()
        ours.append(answering)
        ours_db.append(with_databases)
        tc_seq.append(time_testcontainers_pair(parallel=False))
        tc_par.append(time_testcontainers_pair(parallel=True))
    result = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "runs": args.runs,
        "docker_stack_ready_s": {"median": statistics.median(stack), "all": stack, "target": 10.0},
        "docker_reset_s": {"median": statistics.median(resets), "max": max(resets), "n": len(resets)},
        "redis_postgres_jobquake_s": {"median": statistics.median(ours), "all": ours},
        "redis_postgres_jobquake_with_databases_s": {"median": statistics.median(ours_db), "all": ours_db},
        "redis_postgres_testcontainers_sequential_s": {"median": statistics.median(tc_seq), "all": tc_seq},
        "redis_postgres_testcontainers_parallel_s": {"median": statistics.median(tc_par), "all": tc_par},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1))
    print_table(result)
    return 0


def print_table(r: dict) -> None:
    ours = r["redis_postgres_jobquake_s"]["median"]
    rows = [
        ("ready docker stack (7 containers)", r["docker_stack_ready_s"]["median"], "<= 10 s"),
        ("per-test reset, docker stack", r["docker_reset_s"]["median"], ""),
        ("Redis + Postgres: jobquake docker backend", ours, ""),
        ("  + Postgres template and app databases", r["redis_postgres_jobquake_with_databases_s"]["median"], ""),
        ("Redis + Postgres: testcontainers, sequential", r["redis_postgres_testcontainers_sequential_s"]["median"],
         "jobquake no slower"),
        ("Redis + Postgres: testcontainers, parallel", r["redis_postgres_testcontainers_parallel_s"]["median"],
         "jobquake no slower"),
    ]
    print(f"median of {r['runs']} runs, {r['machine']['cpus']} cpus")
    for name, value, target in rows:
        print(f"  {name:<46} {value * 1000:8.0f} ms   {target}")
    for key, label in (("sequential", "sequential"), ("parallel", "parallel")):
        ratio = r[f"redis_postgres_testcontainers_{key}_s"]["median"] / ours
        print(f"  {'testcontainers (' + label + ') / jobquake':<46} {ratio:8.2f} x")


if __name__ == "__main__":
    sys.exit(main())
