"""What the Django instrumentation costs an app process: per statement and per transaction.

A Django process on a real Postgres (the harness's own cluster) runs
``SELECT 1`` through Django's cursor, alone (an autocommit statement) and
inside ``transaction.atomic()`` with an ``on_commit`` callback (a
transaction: the commit's two failpoints, the callback), inside a task
run's context (the connection names the run once, then the execute
wrapper only compares) and outside one. Plain and instrumented processes
run alternately, side by side; the figures are medians of the CPU time
(user + system) per operation.

Writes ``benchmarks/results/django_instrument.json``.

    .venv/bin/python benchmarks/django_instrument.py
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = Path(__file__).parent / "results" / "django_instrument.json"
ROUNDS = 5
OPS = 2000

CHILD = """
import json, sys, time
import django
from django.conf import settings
from django.db import connection, transaction
host, port, password = sys.argv[1:4]
settings.configure(DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "app",
    "USER": "postgres", "PASSWORD": password, "HOST": host, "PORT": port}}, USE_TZ=True)
django.setup()
ops = int(sys.argv[4])
try:
    from harness.instrument import _context
except ImportError:
    _context = None

def statement():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")

def committed():
    with transaction.atomic():
        statement()
        transaction.on_commit(lambda: None)

def per_op(fn):
    fn()
    start = time.process_time()
    for _ in range(ops):
        fn()
    return (time.process_time() - start) / ops * 1e6

out = {"statement_us": per_op(statement), "transaction_us": per_op(committed)}
if _context is not None and "harness.instrument._django" in sys.modules:
    _context.enter(_context.JobContext("job-1", 1, "bench.task", "t-1"))
out["statement_in_task_us"] = per_op(statement)
out["transaction_in_task_us"] = per_op(committed)
print(json.dumps(out))
"""


def run(postgres, env: dict[str, str]) -> dict[str, float]:
    args = [sys.executable, "-c", CHILD, "127.0.0.1", str(postgres.port), postgres.password, str(OPS)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True, timeout=600)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    from harness.failpoints.control import FailpointControl
    from harness.instrument.control import InstrumentControl
    from tests.common.postgres import postgres_service

    plain = {k: v for k, v in os.environ.items() if not k.startswith("JOBQUAKE_")}
    plain["PYTHONPATH"] = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="jobquake-bench-") as tmp, postgres_service(Path(tmp) / "pg") as pg:
        failpoints = FailpointControl.create(Path(tmp) / "fp")
        instrument = InstrumentControl.create(Path(tmp) / "instrument")
        instrumented = {**plain, **failpoints.env(), **instrument.env(
            paidapi_url="http://127.0.0.1:1", job_id_from="args[0]", pythonpath=str(ROOT))}
        samples: dict[str, list[dict[str, float]]] = {"plain": [], "instrumented": []}
        for _ in range(ROUNDS):  # alternated: both see the same load
            samples["plain"].append(run(pg, plain))
            samples["instrumented"].append(run(pg, instrumented))
    keys = samples["plain"][0]
    medians = {mode: {k: round(statistics.median(s[k] for s in runs), 2) for k in keys}
               for mode, runs in samples.items()}
    ratios = {k: round(medians["instrumented"][k] / medians["plain"][k], 3) for k in keys}
    for k in keys:
        print(f"{k:24} plain {medians['plain'][k]:8.2f} µs   instrumented {medians['instrumented'][k]:8.2f} µs"
              f"   ratio {ratios[k]:.3f}")
    RESULTS.write_text(json.dumps({"machine": platform.node(), "python": platform.python_version(),
                                   "rounds": ROUNDS, "ops": OPS, "median_cpu_us": medians,
                                   "ratio": ratios, "load": os.getloadavg()}, indent=2) + "\n")
    print(f"results: {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
