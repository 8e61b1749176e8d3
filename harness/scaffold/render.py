"""Turn a scan's findings into the ``[tool.jobquake]`` text and the scenario files."""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from harness.config import BY_KEY
from harness.scaffold import roles, templates
from harness.scaffold.scan import Findings, Function, Table

TIME_SCALE = 0.01  # the harness's default: written out so the scaled values below can be read against it
TODO = "TODO(jobquake init)"
STATE_WORDS = ("status", "state")
COLUMN_HINTS = {  # config key -> words a column name of that role contains
    "job_reason_column": ("reason", "note", "error", "failure", "message"),
    "job_attempt_column": ("attempt", "tries", "try_", "retries", "retry"),
    "job_heartbeat_column": ("heartbeat", "touched", "updated_at", "seen_at", "alive"),
}
WORKER = ("celery -A {app} worker --pool prefork --concurrency 2 -n {{name}}@%h "
          "--without-mingle --without-gossip --without-heartbeat --loglevel INFO")


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
    job = _job_table(found)
    env = [roles.env_value(name, default, TIME_SCALE) for name, default in sorted(found.env_vars.items())
           if name not in found.env_values]
    env = sorted([e for e in env if e is not None] + [roles.EnvValue(name, value, why) for name, (value, why)
                                                      in found.env_values.items()], key=lambda e: e.name)
    names = {e.name for e in env}
    lines = _config_lines(found, job, env, todos)
    values = _scenario_values(found, env, names, todos)
    files = {f"scenarios/{name}": templates.render(name, values) for name in templates.FILES}
    files.update({f"scenarios/{name}": templates.render_text(text, values) for name, text in found.scenario_files.items()})
    pytest_section = "" if found.has_pytest_config else templates.PYTEST_SECTION
    return Scaffold(config="\n".join(lines) + "\n", files=files, todos=todos, pytest_section=pytest_section)


# -- the config section ------------------------------------------------------------
def _config_lines(found: Findings, job: Table | None, env: list[roles.EnvValue], todos: list[str]) -> list[str]:
    out = ["# jobquake: how to run this project under test. Written by `jobquake init`; edit freely.",
           "# `jobquake config` prints every effective setting and where it came from.",
           "[tool.jobquake]"]
    if found.schema_command:
        out += ["# found: the project's own migrations; run once per session on the template database, with",
                "# [tool.jobquake.env] naming that database",
                f"schema = {json.dumps(found.schema_command)}"]
    elif found.schema_function:
        out += [f"# found: {found.schema_function} calls metadata.create_all(); run once on the template database",
                f"schema = {json.dumps(found.schema_function)}"]
    else:
        out += _todo("schema", "'module:function' creating your tables, called with a database URL", todos)
    if found.celery_app:
        module, var = found.celery_app
        app = module if var in ("app", "celery") else f"{module}:{var}"
        out += [f"# found: Celery(...) assigned to {var} in {module}; quick start-up flags, 2 pool children each",
                f"worker_command = {json.dumps(WORKER.format(app=app))}", "workers = 2"]
    else:
        out += _todo("worker_command", "the command that starts one Celery worker ({name} = its node name)", todos)
    out += _job_lines(found, job, todos)
    out += ["# long enough for a killed worker's task to come back from the broker",
            "settle_timeout = 20", f"time_scale = {TIME_SCALE:g}"]
    if found.model_clients:
        out += [f"# found: imports of {', '.join(sorted(found.model_clients))}: imported once, before the app's "
                f"processes are forked", f"app_preload = {json.dumps(sorted(found.model_clients))}"]
    out += _task_lines(found)
    out += ["", "# your app's own variable names, filled from the stack jobquake starts", "[tool.jobquake.env]"]
    for note in found.env_todos:
        out.append(f"# {TODO}: {note}")
        todos.append(f"[tool.jobquake.env] {note}")
    for e in env:
        out += [f"# {e.why}", f"{e.name} = {json.dumps(e.value)}"]
    left = sorted(set(found.env_vars) - {e.name for e in env})
    if left:
        out.append(f"# also read by the code, left to its defaults: {', '.join(left)}")
    for name, process in sorted(found.commands.items()):
        out += ["", f"# found: {process.why}", f"[tool.jobquake.processes.{name}]",
                f"command = {json.dumps(process.command)}", f"ready = {json.dumps(process.ready or 'tcp')}"]
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


def _todo(key: str, what: str, todos: list[str], example: str = '""') -> list[str]:
    todos.append(f"[tool.jobquake] {key}: {what}")
    return [f"# {TODO}: {key} = {what}", f"# {key} = {example}"]


def _job_table(found: Findings) -> Table | None:
    with_state = [t for t in found.tables if any(c.lower() in STATE_WORDS for c, _ in t.columns)]
    return with_state[0] if with_state else None


def _job_lines(found: Findings, job: Table | None, todos: list[str]) -> list[str]:
    if job is None:
        return _todo("job_table", "the table with one row per job (and job_id_column, job_state_column...)", todos)
    columns = [c for c, _ in job.columns]
    key = next((c for c, primary in job.columns if primary), columns[0])
    state = next(c for c in columns if c.lower() in STATE_WORDS)
    out = [f"# found: table {job.name!r} ({job.module}.{job.variable}) has a {state!r} column",
           f"job_table = {json.dumps(job.name)}", f"job_id_column = {json.dumps(key)}",
           f"job_state_column = {json.dumps(state)}"]
    for option, words in COLUMN_HINTS.items():
        match = next((c for w in words for c in columns if w in c.lower()), None)  # words in order of trust
        if match:
            out.append(f"{option} = {json.dumps(match)}")
        else:
            out += [f"# {TODO}: {option}: no column looked like one; empty means none",
                    f"{option} = \"\""]
            todos.append(f"[tool.jobquake] {option}: no column of {job.name!r} looked like one (left empty)")
    if found.final_states:
        why = found.final_states_why or "a constant of final states"
        out.append(f"terminal_states = {json.dumps(list(found.final_states))}  # found: {why}")
    else:
        out += _todo("terminal_states", "the states a person can see as final", todos, '["done", "failed"]')
    return out


def _task_lines(found: Findings) -> list[str]:
    """Where the job id is in a task's arguments, for the instrumentation (when this jobquake has the key)."""
    task = next((t for t in found.tasks if t.params), None)
    if task is None:
        return []
    text = ["# found: task " + (task.name or task.function) + f"({', '.join(task.params)}): the job id is its "
            "first argument"]
    line = 'job_id_from = "args[0]"'
    return text + ([line] if "job_id_from" in BY_KEY else [f"# {line}  (a later jobquake reads this key)"])


# -- the scenarios ------------------------------------------------------------------
def _scenario_values(found: Findings, env: list[roles.EnvValue], names: set[str],
                     todos: list[str]) -> dict[str, str]:
    by_role = {role: next((e for e in env if check(e.name)), None) for role, check in
               (("deadline", roles.deadline), ("soft", roles.soft_limit), ("hard", roles.hard_limit))}
    submit = found.submit or _submit_function(found)
    sweeper = next((m.rsplit(".", 1)[-1] for m in sorted([*found.processes, *found.commands])
                    if "sweep" in m or "reap" in m or m == "beat"), None)
    values = {"SUBMIT": json.dumps(f"{submit.module}:{submit.name}") if submit else "None",
              "SUBMIT_WHY": (f"found: {submit.module}.{submit.name} writes to the job table" if submit
                             else f"{TODO}: 'module:function' that takes a new job and returns its id"),
              "JOB_ARGS": _job_args(submit, todos),
              "SWEEPER": json.dumps(sweeper) if sweeper else "None",
              "SWEEPER_WHY": ("found: the process that sends stale jobs again" if sweeper
                              else "no sweeper process found: nothing to stop"),
              "POOL_AT": "sqlalchemy.after_commit", "POOL_KIND": "SQLAlchemy", "STALE_JOB": "{}",
              **found.scenario_values}
    for role, label in (("deadline", "DEADLINE"), ("soft", "SOFT_LIMIT"), ("hard", "HARD_LIMIT")):
        found_var = by_role[role]
        values[f"{label}_VAR"] = json.dumps(found_var.name) if found_var else "None"
        values[f"{label}_S"] = found_var.value if found_var else "None"
        if found_var is None:
            todos.append(f"scenarios: no environment variable looked like the {role} limit "
                         f"({label}_VAR in scenarios/test_*.py); that scenario skips")
    todos.append("scenarios/test_sweep.py STALE_JOB, POISON: a row your sweep picks up, and what makes one "
                 "poison (that scenario skips until they are set)")
    if submit is None:
        todos.append("scenarios/conftest.py SUBMIT: no function writing to the job table was found")
    return values


def _submit_function(found: Findings) -> Function | None:
    job = _job_table(found)
    if job is None:
        return None
    task_modules = {(t.module, t.function) for t in found.tasks}
    for fn in found.functions:
        if fn.name.startswith("_") or (fn.module, fn.name) in task_modules or fn.module in found.processes:
            continue
        if writes_to(fn, job):
            return fn
    return None


def writes_to(fn: Function, table: Table) -> bool:
    """True when ``fn`` inserts into ``table``: ``insert(<its variable>)`` or ``INSERT INTO <its name>``."""
    for node in ast.walk(fn.body):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "insert" \
                and any(isinstance(a, ast.Name) and a.id == table.variable for a in node.args):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == table.variable:
            return True  # an ORM object of the job's class is built here (then added to a session)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                f"insert into {table.name}" in " ".join(node.value.lower().split()):
            return True
    return False


def _job_args(fn: Function | None, todos: list[str]) -> str:
    if fn is None:
        return "{}"
    items = []
    for name, annotation, has_default in fn.params:
        if has_default:
            continue
        value = _sample(name, annotation)
        if value is None:
            todos.append(f"scenarios/conftest.py job_args: a value for {fn.name}'s argument {name!r}")
            value = f"None,  # {TODO}: a value for {name}"
            items.append(f"        {name!r}: {value}")
            continue
        items.append(f"        {name!r}: {value},")
    return "{\n" + "\n".join(items) + "\n    }" if items else "{}"


def _sample(name: str, annotation: str) -> str | None:
    base = annotation.replace(" ", "")
    if base in ("str", ""):
        return f'f"{name} {{n}}"' if base == "str" else None
    if base == "int":
        return "n"
    if base == "float":
        return "float(n)"
    if base == "bool":
        return "False"
    if base.startswith(("list[str]", "List[str]", "Sequence[str]")):
        return f'[f"{name} {{n}}, first"]'
    return None

