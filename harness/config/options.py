"""The option table: every configuration key, its parser, default and help, and the bounds of numbers.

One row per key (``Option``); ``Config`` (settings.py) has one typed field
per row and ``load.resolve`` fills it. A new setting is a row here, a field
there, and, if its value needs checking, a parser in validators.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness.config import validators as vd

__all__ = ["BY_KEY", "DEFAULT_TERMINAL_STATES", "OPTIONS", "Option", "RANGES", "RESERVED_ENV"]

# The states a person can see as final, where the app's config names none: the one definition
# (config's default, a snapshot's, and every checker's fallback).
DEFAULT_TERMINAL_STATES = ("done", "failed", "needs_human")

# Environment variables jobquake sets for its own processes: never config keys.
RESERVED_ENV = {"JOBQUAKE_FAILPOINTS_DIR", "JOBQUAKE_CACHE_DIR", "JOBQUAKE_REQUIRE_DOCKER",
                "JOBQUAKE_INSTRUMENT_DIR", "JOBQUAKE_INSTRUMENT_JOB_ID_FROM", "JOBQUAKE_PAIDAPI_URL",
                "JOBQUAKE_PROCESS_NAME", "JOBQUAKE_INSTRUMENT_SETTINGS"}
RESERVED_ENV |= {"JOBQUAKE_MUTANT_REACH"}  # `mutants --full`: the folder the app's mutant switch writes its reach to


@dataclass(frozen=True)
class Option:
    """One configuration key: its parser, default, help, and whether it is a scalar.

    Only scalars can come from the command line, the environment or ini;
    tables (processes, env templates, queues) live in pyproject.toml.
    """

    key: str
    parse: Callable[[Any], Any]
    default: Any
    help: str
    scalar: bool = True


OPTIONS: tuple[Option, ...] = (
    Option("backend", vd.choice("process", "docker"), "process", "where services run: local processes or docker containers"),
    Option("seed", int, None, "seed for every random choice (latencies, toxicity, failpoints); printed so a run can be replayed"),
    Option("time_scale", vd.positive_float, 0.01, "multiplier applied to every budget and latency (1.0 = production time)"),
    Option("artifacts", str, ".jobquake/artifacts", "folder for per-test evidence: history, logs, timeline"),
    Option("workers", vd.non_negative_int, 2, "number of Celery workers to start"),
    Option("worker_command", str, "", "command template starting one Celery worker (prefork pool)"),
    Option("worker_ready", str, r"log:\bready\.", "readiness check of a worker"),
    Option("start_timeout", vd.positive_float, 30.0, "seconds a service may take to become ready"),
    Option("settle_timeout", vd.positive_float, 30.0, "seconds to wait for the system to go quiet after a scenario"),
    Option("schema", str, "", "'module:function' called with a database URL to create the app's schema"),
    Option("budgets", str, "", "'module:function' returning the app's declared task budgets"),
    Option("job_table", str, "jobs", "table holding one row per job"),
    Option("job_id_column", str, "id", "job id column"),
    Option("job_state_column", str, "state", "job state column"),
    Option("job_reason_column", str, "reason", "job failure reason column (left at its default, not read when the table has none)"),
    Option("job_attempt_column", str, "attempt", "job attempt (fencing token) column (left at its default, not read when the table has none)"),
    Option("job_heartbeat_column", str, "heartbeat_at", "job heartbeat column ('' if none; left at its default, not read when the table has none)"),
    Option("terminal_states", vd.str_list, DEFAULT_TERMINAL_STATES,
           "states a person can see as final, the success state first (a nightly counts it as done)"),
    Option("redis_binary", str, "", "path of redis-server (default: PATH)"),
    Option("postgres_bindir", str, "", "folder of initdb/postgres (default: PATH, pg_config, /usr/lib/postgresql/*/bin)"),
    Option("postgres_max_connections", vd.non_negative_int, 60, "Postgres max_connections"),
    Option("paidapi_profile", str, "default", "latency profile of the fake paid API ('default' or 'fixed:<seconds>')"),
    Option("proxied", vd.str_list, ("paidapi",), "services the app reaches through the fault proxy"),
    Option("docker_host", str, "", "Docker engine address for the docker backend (default: DOCKER_HOST, then the local socket)"),
    Option("docker_network", vd.choice("host", "bridge"), "host",
           "docker backend networking: host (every server on 127.0.0.1 of the host) or bridge (ports published on 127.0.0.1)"),
    Option("docker_redis_image", str, "jobquake/redis", "image of Redis for the docker backend (e.g. redis:7)"),
    Option("docker_postgres_image", str, "jobquake/postgres", "image of Postgres for the docker backend (e.g. postgres:15)"),
    Option("docker_sqs_image", str, "jobquake/sqs", "image of the SQS server (moto) for the docker backend"),
    Option("docker_proxy_image", str, "jobquake/proxy", "image of the fault proxy (e.g. ghcr.io/shopify/toxiproxy)"),
    Option("docker_paidapi_image", str, "jobquake/paidapi", "image of the fake paid API for the docker backend"),
    Option("docker_app_image", str, "jobquake/app", "image the app's processes and workers run in (docker backend)"),
    Option("scenarios", str, "scenarios", "folder of the shipped scenarios (demo, mutation matrix)"),
    Option("mutants", str, "", "'module:attr' naming the app's mutants: a dict name -> description"),
    Option("mutant_env", str, "", "environment variable that switches a mutant on in app processes"),
    Option("env", vd.table, {}, "environment of app processes: VAR = template", scalar=False),
    Option("processes", vd.table, {}, "app processes: name = {command, ready, start_timeout, instrument}", scalar=False),
    Option("queues", vd.list_of_tables, (), "SQS queues: {name, visibility_timeout, dead_letter, max_receives}", scalar=False),
    Option("sqs", vd.choice("moto", "localstack"), "moto",
           "the SQS server: moto (lighter) or LocalStack (needs pip install 'jobquake[localstack]')"),
    Option("docker_localstack_image", str, "jobquake/localstack",
           "image of LocalStack for the docker backend when sqs = 'localstack' (e.g. localstack/localstack)"),
    Option("on_unknown", vd.choice("fail", "warn"), "fail",
           "what an invariant that could not be decided (no evidence) does to its test: fail, or warn"),
    Option("pending_queries", vd.sql_list, (), "SQL queries counting the app's other pending work (e.g. unsent "
           "outbox rows): settling waits until each returns 0", scalar=False),
)

# The paid API: attribution of calls by their idempotency key, and the price table.
OPTIONS += (
    Option("call_key", vd.call_key, "",
           "pattern of the app's paid-API idempotency keys naming the job, e.g. 'sum:{job_id}:{step}' "
           "({job_id} required, {step} and {attempt} optional); calls whose key does not match are "
           "unattributed; '' = attribute by X-Job-Id headers only"),
    Option("call_key_header", str, "Idempotency-Key", "request header holding the key call_key reads"),
    Option("paidapi_prices", vd.prices, {},
           "paid API price table: model = {input, output} in USD per million tokens, over built-in "
           "list prices; '*' admits and prices every other model (unknown models get a 404)",
           scalar=False),
)
# -- instrumentation of the app's processes, and the job table's age column ---------------------
OPTIONS += (
    Option("instrument", vd.boolean, True,
           "load jobquake's instrumentation into app processes and workers (tags paid calls, framework failpoints)"),
    Option("job_id_from", vd.job_id_expression, "",
           "where a Celery task's job id is: '' (the task id), 'args[N]', a parameter name, or 'module:callable'"),
    Option("job_updated_column", str, "", "job last-change time column ('' if none): snapshots show each job's age"),
    Option("nightly", vd.table, {}, "nightly runs: submit, job_bound, faults, rate, concurrency, pause_services, "
           "defences, pool_failpoint (see harness/nightly/settings.py)", scalar=False),
)
# How app processes start on the process backend (harness.stack.zygote).
OPTIONS += (
    Option("app_zygote", vd.boolean, True,
           "process backend: fork app processes and workers from one interpreter that has imported their "
           "libraries (false: a fresh interpreter each)"),
    Option("app_preload", vd.str_list, (),
           "modules the zygote imports besides its own list (Celery, kombu, redis, SQLAlchemy, psycopg, httpx, "
           "requests, boto3): the app's model client (openai, anthropic), say"),
)
# Evidence for the generic invariants (limits nesting, end-to-end deadline, result provenance).
OPTIONS += (
    Option("limits", str, "",
           "'module:function' returning the app's layered limits ({chains, step_blocked}; see harness/limits.py)"),
    Option("results_query", str, "",
           "SQL returning the app's saved paid-step results: job_id, step, attempt, call_id, saved_at (epoch s)"),
)
# Attaching an app as it is: provider hosts its code calls, timings set in its code (harness/instrument/).
OPTIONS += (
    Option("paid_hosts", vd.paid_hosts, {},
           "model providers the app calls by its own URL, sent to the fake paid API like the known public "
           "ones: URL prefixes, or a table of URL prefix -> the fake's path prefix", scalar=False),
    Option("scale_paid_call_timeouts", vd.seconds_list, (),
           "paid-call timeouts in the app's code (production seconds: a timeout=45, a client's 600 s default) "
           "that are scaled by time_scale when a call sets them", scalar=False),
    Option("celery", vd.celery, {},
           "Celery settings applied inside every worker and beat, in production seconds (broker_transport_options, "
           "task limits, tasks, beat_schedule, scale_retry_delays; see harness/instrument/celery_settings.py)",
           scalar=False),
)

# Evidence of the app's status streams and sweeps (harness/streams, harness/evidence/collect.py).
OPTIONS += (
    Option("status_stream", str, "",
           "URL template of the app's all-jobs status stream (SSE), e.g. '{api_url}/events': read during "
           "every test"),
    Option("job_status_stream", str, "",
           "URL template of one job's status stream (SSE), e.g. '{api_url}/jobs/{job_id}/events' "
           "(jq.streams.job(job_id))"),
    Option("sweep_predicate", str, "",
           "SQL returning the ids of the rows the app's sweep must handle now (its own predicate)"),
)
BY_KEY = {opt.key: opt for opt in OPTIONS}

# Environment variables read directly where they act (not config keys): the tmpfs of throwaway data
# (harness.stack.reaper), the switch that makes the tests run as an attacker mandatory, and the
# images' name prefix scripts/build-images.sh takes (set in a shell that later runs pytest).
RESERVED_ENV |= {"JOBQUAKE_MEMORY_DIR", "JOBQUAKE_REQUIRE_ROOT_TESTS", "JOBQUAKE_IMAGE_PREFIX"}

# Every number a setting can hold, inclusive bounds: a value outside fails at once with the key,
# its source and the range, not later in a worker (an infinite time scale, 0 connections...).
RANGES: dict[str, tuple[float, float]] = {
    "seed": (0, 2**63 - 1),
    "time_scale": (1e-4, 10.0),
    "workers": (0, 64),
    "start_timeout": (0.1, 3600.0),
    "settle_timeout": (0.1, 3600.0),
    "postgres_max_connections": (5, 10_000),  # Postgres reserves 3 slots for superusers
}
