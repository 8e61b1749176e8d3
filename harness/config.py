"""One typed configuration, resolved once from every place a user can write it.

Precedence, highest first: command line (``--jobquake-x``), environment
(``JOBQUAKE_X``), pytest ini (``jobquake_x``), ``[tool.jobquake]`` in
pyproject.toml, then the default. Every value remembers where it came from,
so ``jobquake config`` can say why a setting has the value it has. Unknown
keys and invalid values are errors that name the key and the source.
"""
from __future__ import annotations

import math
import os
import random
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from harness.errors import ConfigError

# The states a person can see as final, where the app's config names none: the one definition
# (config's default, a snapshot's, and every checker's fallback).
DEFAULT_TERMINAL_STATES = ("done", "failed", "needs_human")

# Environment variables jobquake sets for its own processes: never config keys.
RESERVED_ENV = {"JOBQUAKE_FAILPOINTS_DIR", "JOBQUAKE_CACHE_DIR", "JOBQUAKE_REQUIRE_DOCKER",
                "JOBQUAKE_INSTRUMENT_DIR", "JOBQUAKE_INSTRUMENT_JOB_ID_FROM", "JOBQUAKE_PAIDAPI_URL",
                "JOBQUAKE_PROCESS_NAME"}
RESERVED_ENV |= {"JOBQUAKE_MUTANT_REACH"}  # `mutants --full`: the folder the app's mutant switch writes its reach to


def _positive_float(value: Any) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError("must be > 0")
    return number


def _non_negative_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("must be an integer")
    number = int(value)
    if number < 0:
        raise ValueError("must be >= 0")
    return number


def _choice(*allowed: str) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value
    return parse


def _str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("must be a list of strings or a comma-separated string")


def _table(value: Any) -> dict:
    if not isinstance(value, Mapping):
        raise ValueError("must be a table")
    return dict(value)


def _list_of_tables(value: Any) -> tuple[dict, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, Mapping) for v in value):
        raise ValueError("must be a list of tables")
    return tuple(dict(v) for v in value)


def _sql_list(value: Any) -> tuple[str, ...]:
    # never split on commas: SQL has them
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v.strip() for v in value):
        return tuple(value)
    raise ValueError("must be a list of SQL queries, each returning one number")


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
    Option("backend", _choice("process", "docker"), "process", "where services run: local processes or docker containers"),
    Option("seed", int, None, "seed for every random choice (latencies, toxicity, failpoints); printed so a run can be replayed"),
    Option("time_scale", _positive_float, 0.01, "multiplier applied to every budget and latency (1.0 = production time)"),
    Option("artifacts", str, ".jobquake/artifacts", "folder for per-test evidence: history, logs, timeline"),
    Option("workers", _non_negative_int, 2, "number of Celery workers to start"),
    Option("worker_command", str, "", "command template starting one Celery worker (prefork pool)"),
    Option("worker_ready", str, r"log:\bready\.", "readiness check of a worker"),
    Option("start_timeout", _positive_float, 30.0, "seconds a service may take to become ready"),
    Option("settle_timeout", _positive_float, 30.0, "seconds to wait for the system to go quiet after a scenario"),
    Option("schema", str, "", "'module:function' called with a database URL to create the app's schema"),
    Option("budgets", str, "", "'module:function' returning the app's declared task budgets"),
    Option("job_table", str, "jobs", "table holding one row per job"),
    Option("job_id_column", str, "id", "job id column"),
    Option("job_state_column", str, "state", "job state column"),
    Option("job_reason_column", str, "reason", "job failure reason column"),
    Option("job_attempt_column", str, "attempt", "job attempt (fencing token) column"),
    Option("job_heartbeat_column", str, "heartbeat_at", "job heartbeat column ('' if none)"),
    Option("terminal_states", _str_list, DEFAULT_TERMINAL_STATES,
           "states a person can see as final, the success state first (a nightly counts it as done)"),
    Option("redis_binary", str, "", "path of redis-server (default: PATH)"),
    Option("postgres_bindir", str, "", "folder of initdb/postgres (default: PATH, pg_config, /usr/lib/postgresql/*/bin)"),
    Option("postgres_max_connections", _non_negative_int, 60, "Postgres max_connections"),
    Option("paidapi_profile", str, "default", "latency profile of the fake paid API ('default' or 'fixed:<seconds>')"),
    Option("proxied", _str_list, ("paidapi",), "services the app reaches through the fault proxy"),
    Option("docker_host", str, "", "Docker engine address for the docker backend (default: DOCKER_HOST, then the local socket)"),
    Option("docker_network", _choice("host", "bridge"), "host",
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
    Option("env", _table, {}, "environment of app processes: VAR = template", scalar=False),
    Option("processes", _table, {}, "app processes: name = {command, ready, start_timeout, instrument}", scalar=False),
    Option("queues", _list_of_tables, (), "SQS queues: {name, visibility_timeout, dead_letter, max_receives}", scalar=False),
    Option("sqs", _choice("moto", "localstack"), "moto",
           "the SQS server: moto (lighter) or LocalStack (needs pip install 'jobquake[localstack]')"),
    Option("docker_localstack_image", str, "jobquake/localstack",
           "image of LocalStack for the docker backend when sqs = 'localstack' (e.g. localstack/localstack)"),
    Option("on_unknown", _choice("fail", "warn"), "fail",
           "what an invariant that could not be decided (no evidence) does to its test: fail, or warn"),
    Option("pending_queries", _sql_list, (), "SQL queries counting the app's other pending work (e.g. unsent "
           "outbox rows): settling waits until each returns 0", scalar=False),
)


# The paid API: attribution of calls by their idempotency key, and the price table.
def _call_key(value: Any) -> str:
    from harness.paidapi.attribution import CallKeyPattern

    if not isinstance(value, str):
        raise ValueError("must be a string such as 'sum:{job_id}:{step}'")
    if value:
        try:
            CallKeyPattern(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc
    return value


def _prices(value: Any) -> dict:
    from harness.paidapi.pricing import PriceTable

    table = _table(value)
    try:
        PriceTable.from_config(table)
    except ConfigError as exc:
        raise ValueError(str(exc)) from exc
    return table


OPTIONS += (
    Option("call_key", _call_key, "",
           "pattern of the app's paid-API idempotency keys naming the job, e.g. 'sum:{job_id}:{step}' "
           "({job_id} required, {step} and {attempt} optional); calls whose key does not match are "
           "unattributed; '' = attribute by X-Job-Id headers only"),
    Option("call_key_header", str, "Idempotency-Key", "request header holding the key call_key reads"),
    Option("paidapi_prices", _prices, {},
           "paid API price table: model = {input, output} in USD per million tokens, over built-in "
           "list prices; '*' admits and prices every other model (unknown models get a 404)",
           scalar=False),
)


# -- instrumentation of the app's processes, and the job table's age column ---------------------
def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def _job_id_expression(value: Any) -> str:
    from harness.instrument.jobid import check

    if not isinstance(value, str):
        raise ValueError("must be a string")
    problem = check(value)
    if problem:
        raise ValueError(problem)
    return value.strip()


OPTIONS += (
    Option("instrument", _bool, True,
           "load jobquake's instrumentation into app processes and workers (tags paid calls, framework failpoints)"),
    Option("job_id_from", _job_id_expression, "",
           "where a Celery task's job id is: '' (the task id), 'args[N]', a parameter name, or 'module:callable'"),
    Option("job_updated_column", str, "", "job last-change time column ('' if none): snapshots show each job's age"),
    Option("nightly", _table, {}, "nightly runs: submit, job_bound, faults, rate, concurrency, pause_services, "
           "defences, pool_failpoint (see harness/nightly/settings.py)", scalar=False),
)
# How app processes start on the process backend (harness.stack.zygote).
OPTIONS += (
    Option("app_zygote", _bool, True,
           "process backend: fork app processes and workers from one interpreter that has imported their "
           "libraries (false: a fresh interpreter each)"),
    Option("app_preload", _str_list, (),
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
# Evidence of the app's status streams and sweeps (harness/streams, harness/sweep_evidence.py).
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
# (harness.stack.reaper), and the switch that makes the tests run as an attacker mandatory.
RESERVED_ENV |= {"JOBQUAKE_MEMORY_DIR", "JOBQUAKE_REQUIRE_ROOT_TESTS"}

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


def _did_you_mean(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, BY_KEY, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _in_range(key: str, value: Any) -> Any:
    """``value`` if it is finite and within the key's range; ValueError naming the range otherwise."""
    if key not in RANGES or value is None:
        return value
    low, high = RANGES[key]
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"must be a finite number from {low:g} to {high:g}")
    return value


@dataclass(frozen=True)
class Config:
    """The effective configuration: one typed field per key of ``OPTIONS`` (its help says what it
    does), ``sources[key]`` where each value came from, ``root`` the project folder.

    Made by ``resolve`` (``jobquake config`` prints it); frozen: a run's settings do not change.
    """

    backend: Literal["process", "docker"]
    seed: int
    time_scale: float
    artifacts: str
    workers: int
    worker_command: str
    worker_ready: str
    start_timeout: float
    settle_timeout: float
    schema: str
    budgets: str
    job_table: str
    job_id_column: str
    job_state_column: str
    job_reason_column: str
    job_attempt_column: str
    job_heartbeat_column: str
    terminal_states: tuple[str, ...]
    redis_binary: str
    postgres_bindir: str
    postgres_max_connections: int
    paidapi_profile: str
    proxied: tuple[str, ...]
    docker_host: str
    docker_network: Literal["host", "bridge"]
    docker_redis_image: str
    docker_postgres_image: str
    docker_sqs_image: str
    docker_proxy_image: str
    docker_paidapi_image: str
    docker_app_image: str
    scenarios: str
    mutants: str
    mutant_env: str
    env: dict[str, Any]
    processes: dict[str, Any]
    queues: tuple[dict[str, Any], ...]
    sqs: Literal["moto", "localstack"]
    docker_localstack_image: str
    on_unknown: Literal["fail", "warn"]
    pending_queries: tuple[str, ...]
    call_key: str
    call_key_header: str
    paidapi_prices: dict[str, Any]
    instrument: bool
    job_id_from: str
    job_updated_column: str
    nightly: dict[str, Any]
    app_zygote: bool
    app_preload: tuple[str, ...]
    limits: str
    results_query: str
    status_stream: str
    job_status_stream: str
    sweep_predicate: str
    sources: Mapping[str, str] = field(default_factory=dict, repr=False)
    root: Path = Path(".")
    # keys of OPTIONS that have no field above yet: still readable as attributes
    more: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_values(cls, values: Mapping[str, Any], sources: Mapping[str, str] | None = None,
                    root: Path = Path(".")) -> "Config":
        """A Config of parsed ``values`` (key -> value); keys without a field go to ``more``."""
        return cls(**{k: v for k, v in values.items() if k in _FIELDS}, sources=dict(sources or {}), root=root,
                   more={k: v for k, v in values.items() if k not in _FIELDS})

    def __getattr__(self, key: str) -> Any:
        more = self.__dict__.get("more") or {}
        if key in more:
            return more[key]
        raise AttributeError(f"{type(self).__name__!r} has no setting {key!r}")

    @property
    def values(self) -> dict[str, Any]:
        """Every setting, key -> value, in the order of ``OPTIONS``."""
        return {opt.key: getattr(self, opt.key) for opt in OPTIONS}

    def describe(self) -> list[tuple[str, Any, str]]:
        """(key, value, where it came from) for every setting, in the order of ``OPTIONS``."""
        return [(opt.key, getattr(self, opt.key), self.sources[opt.key]) for opt in OPTIONS]


_FIELDS = frozenset(f.name for f in fields(Config)) - {"sources", "root", "more"}


def env_name(key: str) -> str:
    return "JOBQUAKE_" + key.upper()


def find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_pyproject(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}", source=str(path)) from exc
    return data.get("tool", {}).get("jobquake", {})


def resolve(
    *,
    cli: Mapping[str, Any] | None = None,
    ini: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    pyproject: Path | None = None,
) -> Config:
    """Merge every source into one Config; raise ConfigError naming key and source."""
    environ = os.environ if environ is None else environ
    layers: list[tuple[str, Mapping[str, Any]]] = []
    layers.append(("command line", {k: v for k, v in (cli or {}).items() if v is not None}))
    layers.append(("environment", _from_env(environ)))
    layers.append(("ini", {k: v for k, v in (ini or {}).items() if v not in (None, "", [])}))
    table = read_pyproject(pyproject)
    layers.append((f"[tool.jobquake] in {pyproject}", table))
    for source, layer in layers:
        for key in layer:
            if key not in BY_KEY:
                raise ConfigError(f"unknown key {key!r} ({source}){_did_you_mean(key)}; known keys: "
                                  f"{', '.join(BY_KEY)}", key=key, source=source)
            if not BY_KEY[key].scalar and source in ("command line", "environment", "ini"):
                raise ConfigError(f"key {key!r} ({source}) is a table: set it in [tool.jobquake]",
                                  key=key, source=source)
    values, sources = {}, {}
    for opt in OPTIONS:
        values[opt.key], sources[opt.key] = _pick(opt, layers)
    if values["seed"] is None:
        values["seed"], sources["seed"] = random.SystemRandom().randrange(2**31), "random (no seed given)"
    root = pyproject.parent if pyproject else Path.cwd()
    return Config.from_values(values, sources, root)


def _from_env(environ: Mapping[str, str]) -> dict[str, str]:
    found = {}
    for name, value in environ.items():
        if name.startswith("JOBQUAKE_") and name not in RESERVED_ENV:
            found[name[len("JOBQUAKE_"):].lower()] = value
    return found


def _pick(opt: Option, layers: list[tuple[str, Mapping[str, Any]]]) -> tuple[Any, str]:
    for source, layer in layers:
        if opt.key in layer:
            raw = layer[opt.key]
            try:
                return _in_range(opt.key, opt.parse(raw)), source
            except (TypeError, ValueError) as exc:
                name = env_name(opt.key) if source == "environment" else opt.key
                raise ConfigError(f"invalid value {raw!r} for {name!r} ({source}): {exc}",
                                  key=opt.key, source=source) from exc
    return opt.default, "default"


def read_ini(start: Path) -> tuple[dict[str, Any], str | None]:
    """``jobquake_*`` keys from the pytest ini file pytest would use (for the CLI, outside pytest)."""
    import configparser

    for folder in [start, *start.parents]:
        pytest_ini = folder / "pytest.ini"
        if pytest_ini.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(pytest_ini)
            section = dict(parser["pytest"]) if parser.has_section("pytest") else {}
            return _strip_prefix(section), str(pytest_ini)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text())
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{pyproject}: not valid TOML: {exc}", source=str(pyproject)) from exc
            section = data.get("tool", {}).get("pytest", {}).get("ini_options")
            if section is not None:
                return _strip_prefix(section), str(pyproject)
    return {}, None


def _strip_prefix(section: Mapping[str, Any]) -> dict[str, Any]:
    return {k[len("jobquake_"):]: v for k, v in section.items() if k.startswith("jobquake_")}


def load_callable(spec: str, key: str, root: Path | None = None, *, kind: str = "function") -> Any:
    """Import 'module:function' named by config key ``key`` (the project folder ``root`` first on the path).

    ``kind``: what the key must name, "function" (anything callable) or "mapping" (a dict);
    anything else found there is a ConfigError saying which key and what it found.
    """
    found = _import_spec(spec, key, root)
    ok = callable(found) if kind == "function" else isinstance(found, Mapping)
    if not ok:
        raise ConfigError(f"{key} = {spec!r} names {_describe(found)}, not a {kind}: point {key} at "
                          f"the app's {kind} ('module:attribute')", key=key)
    return found


def _describe(value: Any) -> str:
    text = repr(value)
    return f"a {type(value).__name__} ({text[:60] + '...' if len(text) > 60 else text})"


def _import_spec(spec: str, key: str, root: Path | None) -> Any:
    import importlib
    import sys

    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the app's modules live in its project, as for its own tools

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"{key} = {spec!r}: expected 'module:function'", key=key)
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{key} = {spec!r}: cannot import: {exc}", key=key) from exc
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the app's module failed as it loaded
        raise ConfigError(f"{key} = {spec!r}: importing {module_name} raised {exc!r}", key=key) from exc


