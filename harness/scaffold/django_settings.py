"""A Django project's settings, read from the source: the environment they read, their database, Celery's.

The settings are the module ``manage.py`` names and every project module
it imports (``from .base import *``, ``from config.settings.celery import *``),
so split settings are read whole. Variables are read through ``os.environ``
(the generic reader), django-environ (``env("X")``, ``env.db("X")``),
python-decouple (``config("X")``) and dj-database-url (``config(env="X")``,
``parse(os.environ["X"])``). A database URL becomes ``{database_dsn}`` (a
libpq URL: what both parse); ``DATABASES`` written by parts from variables
gets the parts (``{database_host}``...). A database or broker the settings
name literally cannot be pointed at the harness's: a TODO says so.
"""
from __future__ import annotations

import ast

from harness.scaffold import read_env
from harness.scaffold.findings import Findings
from harness.scaffold.project import Project

DB_URL_READERS = {"config", "parse"}  # dj_database_url.config(env="X") / parse(os.environ["X"])
ENV_CALLS = {"env", "config", "str", "int", "float", "bool", "list", "db", "db_url", "url", "json", "cache_url",
             "getenv", "get"}
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")  # where init moves the web server
DB_PARTS = {"HOST": "{database_host}", "PORT": "{database_port}", "NAME": "{database_name}",
            "USER": "{database_user}", "PASSWORD": "{database_password}"}


def settings_trees(project: Project, settings: str | None, prefix: str) -> list[tuple[str, ast.Module]]:
    """The settings module and the project modules it imports, transitively."""
    trees = dict(project.modules)
    todo, seen = [prefix + settings] if settings else [], []
    while todo:
        module = todo.pop()
        if module in seen or module not in trees:
            continue
        seen.append(module)
        todo += [m for m in _imported(module, trees[module], prefix) if m in trees]
    return [(m, trees[m]) for m in seen]


def _imported(module: str, tree: ast.Module, prefix: str) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = module.rsplit(".", node.level)[0] + "." if node.level else prefix
            names.append(base + (node.module or "") if node.module else base.rstrip("."))
            names += [f"{names[-1]}.{a.name}" for a in node.names]  # from . import celery: a module too
        elif isinstance(node, ast.Import):
            names += [prefix + a.name for a in node.names]
    return names


def read_environment(project: Project, found: Findings, settings: str | None, prefix: str) -> None:
    """Fill the findings' env vars and values from the settings' reads; a TODO where one is literal."""
    trees = settings_trees(project, settings, prefix)
    schemes = read_env.scheme_defaults(project)
    for module, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                _env_call(node, found, module, schemes)
            elif isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "DATABASES":
                _database_parts(node.value, found)
    names = {n.targets[0].id: (module, n.value) for module, tree in trees for n in tree.body
             if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}
    if "DATABASES" in names and "{database_dsn}" not in {v for v, _ in found.env_values.values()} \
            and "{database_host}" not in {v for v, _ in found.env_values.values()}:
        found.env_todos.append(f"DATABASES in {names['DATABASES'][0]} reads no environment variable: jobquake "
                               f"cannot point it at its database (read it from DATABASE_URL, say)")
    broker = names.get("CELERY_BROKER_URL")
    if broker is not None and isinstance(broker[1], ast.Constant):
        found.env_todos.append(f"CELERY_BROKER_URL in {broker[0]} is written out ({broker[1].value!r}): jobquake "
                               f"cannot point it at its Redis (read it from an environment variable)")


def has_setting(project: Project, settings: str | None, prefix: str, name: str) -> bool:
    """True when the settings assign ``name`` (``CELERY_BEAT_SCHEDULE``...)."""
    return any(isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == name
               for _, tree in settings_trees(project, settings, prefix) for n in tree.body)


def atomic_requests(project: Project, settings: str | None, prefix: str) -> bool:
    """True unless no database of the settings sets ``ATOMIC_REQUESTS`` (or sets it to a literal False)."""
    for _, tree in settings_trees(project, settings, prefix):
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                values = [v for k, v in zip(node.keys, node.values)
                          if isinstance(k, ast.Constant) and k.value == "ATOMIC_REQUESTS"]
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
                key = node.targets[0].slice
                values = [node.value] if isinstance(key, ast.Constant) and key.value == "ATOMIC_REQUESTS" else []
            else:
                continue
            if any(not (isinstance(v, ast.Constant) and v.value is False) for v in values):
                return True
    return False


def allowed_hosts(project: Project, settings: str | None, prefix: str) -> tuple[str, str] | None:
    """The variable ``ALLOWED_HOSTS`` is read from, and loopback's hosts in its format (``env.list`` and
    decouple's ``Csv()`` split at commas, a ``.split(" ")`` at spaces); None when the settings read none."""
    for _, tree in settings_trees(project, settings, prefix):
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "ALLOWED_HOSTS"):
                continue
            reads = [n for n in ast.walk(node.value) if isinstance(n, ast.Call) and _env_name(n)]
            reads += [n for n in ast.walk(node.value) if isinstance(n, ast.Subscript) and _env_name(n)]
            if not reads:
                return None
            splits = [n for n in ast.walk(node.value) if isinstance(n, ast.Call) and
                      getattr(n.func, "attr", "") == "split" and n.args and isinstance(n.args[0], ast.Constant)]
            separator = str(splits[0].args[0].value) if splits else ","
            return str(_env_name(reads[0])), separator.join(LOOPBACK_HOSTS)
    return None


def _env_call(node: ast.Call, found: Findings, module: str, schemes: dict[str, object]) -> None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
    if owner == "dj_database_url" and name in DB_URL_READERS:
        var = next((k.value.value for k in node.keywords if k.arg == "env" and isinstance(k.value, ast.Constant)),
                   "DATABASE_URL" if name == "config" else None)
        if var is None and node.args and isinstance(node.args[0], ast.Subscript):
            var = getattr(node.args[0].slice, "value", None)
        if isinstance(var, str):
            found.env_values[var] = ("{database_dsn}", "DATABASES from it by dj-database-url: the per-test "
                                                       "database jobquake starts, as a libpq URL")
        return
    var = _env_name(node)
    if var is None or name not in ENV_CALLS:
        return
    if name in ("db", "db_url"):
        found.env_values[var] = ("{database_dsn}", "DATABASES from it by django-environ: the per-test "
                                                   "database jobquake starts")
    else:  # django-environ's env("X") and decouple's config("X") raise when X is unset and has no default
        default = next((k.value for k in node.keywords if k.arg == "default"), node.args[1] if len(node.args) > 1
                       else None)
        required = name not in ("get", "getenv") and var not in schemes and not read_env.has_default(node)
        found.add_env(var, schemes.get(var, default.value if isinstance(default, ast.Constant) else None),
                      source=f"{name}() in {module}", required=required)


def _env_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        var = node.args[0].value
        return var if isinstance(var, str) and var.isupper() and "_" in var else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and "environ" in ast.dump(node.value):
        return str(node.slice.value)
    return None


def _database_parts(value: ast.expr, found: Findings) -> None:
    """``DATABASES = {"default": {"HOST": os.environ.get("POSTGRES_HOST"), ...}}``: each part's variable."""
    for default in getattr(value, "values", []):
        for key, part in zip(getattr(default, "keys", []), getattr(default, "values", [])):
            var = _env_name(part)
            if isinstance(key, ast.Constant) and key.value in DB_PARTS and var:
                found.env_values[var] = (DB_PARTS[key.value], f"DATABASES' {key.value} from it: the per-test "
                                                              f"database jobquake starts")
