"""Turn a scan's findings into the ``[tool.jobquake]`` text and the scenario files."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from harness.paidapi.pricing import DEFAULT_PRICES
from harness.scaffold import render_job_id, render_timing, roles, submit as submits, templates
from harness.scaffold.findings import Findings, Table
from harness.scaffold.jobs import JobColumns, job_columns

TIME_SCALE = 0.01  # the harness's default: written out so the scaled values below can be read against it
TODO = "TODO(jobquake init)"
WORKER = ("celery -A {app} worker --pool prefork --concurrency 2 -n {{name}}@%h "
          "--without-mingle --without-gossip --without-heartbeat --loglevel INFO")
# the variables each official client reads itself when the code passes no base URL or key
CLIENT_VARIABLES = {"openai": (("OPENAI_BASE_URL", "{paidapi_url}/v1"), ("OPENAI_API_KEY", "jobquake-fake-key")),
                    "anthropic": (("ANTHROPIC_BASE_URL", "{paidapi_url}"), ("ANTHROPIC_API_KEY", "jobquake-fake-key")),
                    "ollama": (("OLLAMA_HOST", "{paidapi_url}"),)}


@dataclass
class Scaffold:
    """What ``jobquake init`` writes: the config section, the scenario files, the TODOs left."""

    config: str
    files: dict[str, str]  # path relative to the project -> text
    todos: list[str] = field(default_factory=list)
    pytest_section: str = ""  # a [tool.pytest.ini_options] table, when the project has no pytest config


def render(found: Findings) -> Scaffold:
    """The scaffold for ``found``; every guess is commented, every gap a TODO naming its key."""
    todos: list[str] = []
    job = job_columns(found)
    env = _env_values(found)
    celery, celery_why = render_timing.celery_table(found)
    lines = _config_lines(found, job, env, celery, todos)
    lines += _env_lines(found, env, todos)
    todos += [f"[tool.jobquake.env] {note}" for note in found.env_todos]
    lines += _celery_lines(celery, celery_why)
    lines += _price_lines(found, todos)
    lines += _process_lines(found, todos)
    chosen = submits.choose(found, job.table if job else None)
    values = templates.values(found, chosen, env, submits.session_factory(found, chosen), todos)
    files = {f"scenarios/{name}": templates.render(name, values) for name in templates.FILES}
    files.update({f"scenarios/{name}": templates.render_text(text, values) for name, text in found.scenario_files.items()})
    if chosen.adapter:
        files["scenarios/submit_adapter.py"] = chosen.text or templates.adapter(chosen)
    todos += chosen.todos
    pytest_section = "" if found.has_pytest_config else templates.PYTEST_SECTION
    return Scaffold(config="\n".join(lines) + "\n", files=files, todos=todos, pytest_section=pytest_section)


def _env_values(found: Findings) -> list[roles.EnvValue]:
    """Each variable's value: what a reader decided (``env_values``), else what its role says."""
    env = [roles.EnvValue(name, value, why, "reader") for name, (value, why) in found.env_values.items()]
    annotations = {name: detail.annotation for name, detail in found.env_details.items()}
    production = {name: roles.duration_s(name, default, annotations.get(name, ""))
                  for name, default in found.env_vars.items() if name not in found.env_values}
    scale, limit = roles.limit_scale({n: s for n, s in production.items() if s is not None}, TIME_SCALE)
    for name, default in sorted(found.env_vars.items()):
        if name in found.env_values:
            continue
        seconds = production.get(name)
        raised = seconds is not None and seconds >= limit and scale > TIME_SCALE
        value = roles.env_value(name, default, scale if raised else TIME_SCALE, annotations.get(name, ""))
        if value is not None and raised and value.kind == "duration":
            value = roles.EnvValue(name, value.value, value.why.replace(
                f"x time_scale {scale:g}", f"x {scale:.3g} (time_scale {TIME_SCALE:g} raised so the task's time "
                f"limit is at least {roles.SOFT_LIMIT_AT_LEAST_S:g} s, as a task's imports and connections are "
                "not scaled; what lasts as long in the code is scaled alike, to keep its order)"), value.kind)
        detail = found.env_details.get(name)
        if value is None and detail is not None and detail.required and roles.secret(name):
            value = roles.EnvValue(name, roles.THROWAWAY_SECRET, "a secret the app requires (no default): any "
                                                                 "value works in a test", "secret")
        if value is not None:
            env.append(value)
    env = sorted(roles.spaced_hard_limit(env), key=lambda e: e.name)
    named = {e.name for e in env}
    for client in sorted(found.model_clients):
        for name, value in CLIENT_VARIABLES.get(client, ()):
            if name not in named:
                env.append(roles.EnvValue(name, value, f"read by the official {client} client itself (it is "
                                                       f"imported): the fake paid API", "client"))
    return env


# -- the config section ------------------------------------------------------------
def _config_lines(found: Findings, job: JobColumns | None, env: list[roles.EnvValue], celery: dict,
                  todos: list[str]) -> list[str]:
    out = ["# jobquake: how to run this project under test. Written by `jobquake init`; edit freely.",
           "# `jobquake config` prints every effective setting and where it came from.",
           "[tool.jobquake]"]
    out += _schema_lines(found, todos)
    if found.celery_app:
        module, var = found.celery_app
        app = module if var in ("app", "celery") else f"{module}:{var}"
        out += [f"# found: Celery(...) assigned to {var} in {module}; quick start-up flags, 2 pool children each",
                f"worker_command = {json.dumps(WORKER.format(app=app))}", "workers = 2"]
    else:
        out += _todo("worker_command", "the command that starts one Celery worker ({name} = its node name)", todos)
    out += job.lines(todos) if job else _todo(
        "job_table", "the table with one row per job (and job_id_column, job_state_column...)", todos)
    visibility = next((float(e.value) for e in env if "VISIBILITY" in e.name and e.kind == "duration"), None)
    settle, why = render_timing.settle_timeout(celery, TIME_SCALE, visibility)
    out += [f"# {why}", f"settle_timeout = {settle:g}", f"time_scale = {TIME_SCALE:g}"]
    if found.model_clients:
        out += [f"# found: imports of {', '.join(sorted(found.model_clients))}: imported once, before the app's "
                f"processes are forked", f"app_preload = {json.dumps(sorted(found.model_clients))}"]
    out += render_job_id.lines(found, job)
    if found.database_built_from_parts:
        out += [f"# found: {found.database_built_from_parts} builds the database URL from its host and port, and such a",
                "# URL cannot take the database's Unix socket folder as its host: the database is reached through the",
                "# fault proxy's TCP address on 127.0.0.1 instead ({database_host} and {database_port} then name it)",
                'proxied = "paidapi,postgres"']
    out += _paid_call_lines(found, env)
    out += [f"# {TODO} (optional): for `jobquake mutants`, 'module:NAME' of a dict of your app's switchable bugs",
            "# (name -> what goes wrong) and the variable that switches one on in its processes",
            '# mutants = ""', '# mutant_env = ""']
    return out


def _schema_lines(found: Findings, todos: list[str]) -> list[str]:
    if found.schema_command:
        what = "alembic.ini and its migrations" if "alembic" in found.schema_command else "the project's own migrations"
        return [f"# found: {what}: run once per session in this folder, with the app's environment pointing at the "
                "template database", f"schema = {json.dumps(found.schema_command)}"]
    if found.schema_function:
        return [f"# found: {found.schema_function} calls metadata.create_all(); run once on the template database "
                "(a function taking no URL runs with the app's environment pointing at it)",
                f"schema = {json.dumps(found.schema_function)}"]
    return _todo("schema", "'module:function' creating your tables (called with a database URL), or a command "
                           "such as 'alembic upgrade head'", todos)


def _todo(key: str, what: str, todos: list[str], example: str = '""') -> list[str]:
    todos.append(f"[tool.jobquake] {key}: {what}")
    return [f"# {TODO}: {key} = {what}", f"# {key} = {example}"]


def _paid_call_lines(found: Findings, env: list[roles.EnvValue]) -> list[str]:
    out = []
    values = sorted(scaled_timeouts(found, env))
    if values:
        out += ["# found: timeouts the code's calls set (or a client's own default), in production seconds: a paid",
                "# call that sets one of them gets it x time_scale (a timeout read from a variable is scaled below)",
                f"scale_paid_call_timeouts = {json.dumps(values)}"]
    from harness.instrument._routes import Routes

    unknown = sorted(url for url in found.provider_urls if Routes("http://paid").target(url) is None)
    if unknown:
        hosts = sorted({url.split("/", 3)[0] + "//" + url.split("/", 3)[2] for url in unknown})
        out += [f"# found: the code calls {', '.join(unknown)} by its own URL: sent to the fake paid API",
                f"paid_hosts = {json.dumps(hosts)}"]
    return out


def scaled_timeouts(found: Findings, env: list[roles.EnvValue]) -> set[float]:
    """Paid-call timeouts to scale: the code's literal ones, and a client's default where no variable
    sets the model call's deadline (with one, a client default is a deadline nobody chose: kept)."""
    if any(roles.deadline(e.name) and e.kind == "duration" for e in env):
        return set(found.paid_timeouts)
    return found.paid_timeouts | found.client_default_timeouts


def _env_lines(found: Findings, env: list[roles.EnvValue], todos: list[str]) -> list[str]:
    out = ["", "# your app's own variable names, filled from the stack jobquake starts", "[tool.jobquake.env]"]
    for note in found.env_todos:
        out.append(f"# {TODO}: {note}")
    for e in env:
        source = found.env_details.get(e.name)
        where = f" ({source.source})" if source and source.source else ""
        out += [f"# {e.why}{where}", f"{e.name} = {json.dumps(e.value)}"]
    named = {e.name for e in env}
    left = sorted(set(found.env_vars) - named)
    others = [n for n in left if roles.other_database(n, found.env_vars[n]) and _url_like(n, found.env_vars[n])]
    if others:
        out.append(f"# {TODO}: databases jobquake does not run (it runs PostgreSQL), left as they are: "
                   f"{', '.join(others)}")
        todos.append(f"[tool.jobquake.env] databases jobquake does not run (it runs PostgreSQL): {', '.join(others)}")
        left = [n for n in left if n not in others]
    required = [n for n in left if found.env_details.get(n) and found.env_details[n].required]
    if required:
        out.append(f"# {TODO}: required by the app's settings, with no default (it does not start without them): "
                   f"{', '.join(required)}")
        todos.append(f"[tool.jobquake.env] values for the settings the app requires: {', '.join(required)}")
        left = [n for n in left if n not in required]
    sizes = [n for n in left if roles.size(n)]
    if sizes:
        out.append(f"# sizes and counts, left as the code has them: {', '.join(sizes)}")
    rest = [n for n in left if n not in sizes]
    if rest:
        out.append(f"# also read by the code, left to its defaults: {', '.join(rest)}")
    return out


def _url_like(name: str, default: object) -> bool:
    return "URL" in name or "URI" in name or "DSN" in name or (isinstance(default, str) and "://" in default)


def _celery_lines(table: dict, why: list[str]) -> list[str]:
    if not table:
        return []
    out = ["", "# Celery settings applied inside every worker and beat, over the app's own: production seconds,",
           "# x time_scale (kombu's restore of a dead worker's task included, so a killed worker's task comes back)",
           "[tool.jobquake.celery]"]
    out += [f"# {line}" for line in why]
    out += [f"{key} = {render_timing.toml_inline(value)}" for key, value in table.items()]
    return out


def _price_lines(found: Findings, todos: list[str]) -> list[str]:
    unknown = sorted(m for m in found.model_names if m not in DEFAULT_PRICES)
    if not unknown:
        return []
    todos.append(f"[tool.jobquake.paidapi_prices]: the list prices of {', '.join(unknown)} (0 until set: a "
                 f"duplicate call then costs nothing on the report)")
    out = ["", "# found: models the code names that the fake paid API does not know (it answers an unknown one 404)",
           f"# {TODO}: their list prices in USD per million tokens, for the cost of a duplicate call",
           "[tool.jobquake.paidapi_prices]"]
    return out + [f"{json.dumps(m)} = {{ input = 0.0, output = 0.0 }}" for m in unknown]


def _process_lines(found: Findings, todos: list[str]) -> list[str]:
    out = []
    for name, process in sorted(found.commands.items()):
        out += ["", f"# found: {process.why}", f"[tool.jobquake.processes.{name}]",
                f"command = {json.dumps(process.command)}"]
        if process.ready:
            out.append(f"ready = {json.dumps(process.ready)}")
        else:
            out += _todo(f"processes.{name}.ready", "'log:<text it prints when ready>', 'tcp' or 'http:/path'", todos)
    for module, ready in sorted(found.processes.items()):
        if found.celery_app and module == found.celery_app[0]:
            continue
        name = module.rsplit(".", 1)[-1]
        out += ["", f"# found: `if __name__ == \"__main__\"` in {module}", f"[tool.jobquake.processes.{name}]",
                f"command = {json.dumps('python -m ' + module)}"]
        if ready:
            out.append(f"ready = {json.dumps('log:' + ready)}  # found in {module}'s source")
        else:
            out += _todo(f"processes.{name}.ready", "'log:<text it prints when ready>', 'tcp' or 'http:/path'", todos)
    return out
