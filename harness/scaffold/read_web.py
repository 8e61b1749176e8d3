"""Reader: the long-lived processes an app runs as, besides its Celery workers.

* A web app (``FastAPI()``, ``Starlette()``, ``Flask(__name__)``) assigned
  at module level: served by uvicorn (ASGI) or flask, on the port jobquake
  gives it, ready when a health route answers (or its port accepts).
* Celery beat, where the app has a beat schedule: it runs the app's
  periodic tasks (its sweeper), so scenarios can stop it.
* A module with a ``__main__`` block that takes ``--port`` (argparse or
  click): started with ``--port {port}``.
"""
from __future__ import annotations

import ast

from harness.scaffold.findings import Findings, Process
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, literal

ASGI = {"FastAPI", "Starlette", "Quart", "Litestar"}
WSGI = {"Flask"}
HEALTH_WORDS = ("health", "ready", "ping", "live", "status")
BEAT_READY = "log:beat: Starting..."


def read(project: Project, found: Findings) -> None:
    factories = _factories(found)
    for module, tree in project.modules:
        app = _web_app(tree, factories)
        if app is not None:
            variable, framework = app
            found.commands.setdefault("api", _web_process(module, variable, framework, _health(tree)))
            found.processes.pop(module, None)  # served by the web server, not run as `python -m`
        elif module in found.processes and _takes_port(tree):
            ready = found.processes[module]
            name = module.rsplit(".", 1)[-1]
            found.commands.setdefault(name, Process(f"python -m {module} --port {{port}}",
                                                    f"log:{ready}" if ready else "tcp",
                                                    f"`if __name__ == \"__main__\"` in {module}, with a --port option"))
            found.processes.pop(module, None)
    if found.celery_app and (found.beat_entries or "beat_schedule" in found.celery_conf):
        module, variable = found.celery_app
        app = module if variable in ("app", "celery") else f"{module}:{variable}"
        found.commands.setdefault("beat", Process(
            f"celery -A {app} beat --loglevel INFO -S celery.beat:Scheduler", BEAT_READY,
            f"a beat schedule ({', '.join(sorted(found.beat_entries)) or 'beat_schedule'}): the app's periodic "
            f"tasks; the schedule kept in memory"))


def _factories(found: Findings) -> dict[str, str]:
    """The project's app factories (``def create_app(): app = FastAPI(); ...``): name -> framework."""
    out = {}
    for fn in found.functions:
        kinds = {call_name(n) for n in ast.walk(fn.body) if isinstance(n, ast.Call)} & (ASGI | WSGI)
        if kinds:
            out[fn.name] = sorted(kinds)[0]
    return out


def _web_app(tree: ast.Module, factories: dict[str, str]) -> tuple[str, str] | None:
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            kind = call_name(node.value)
            kind = factories.get(kind or "", kind)  # an app made by the project's own factory
            if isinstance(target, ast.Name) and kind in ASGI | WSGI:
                return target.id, kind  # type: ignore[return-value]
    return None


def _web_process(module: str, variable: str, framework: str, health: str | None) -> Process:
    ready = f"http:{health}" if health else "tcp"
    if framework in WSGI:
        command = f"flask --app {module}:{variable} run --host 127.0.0.1 --port {{port}}"
    else:
        command = f"uvicorn {module}:{variable} --host 127.0.0.1 --port {{port}}"
    why = f"{framework}() assigned to {variable} in {module}" + (f"; GET {health} answers when it is up"
                                                                 if health else "")
    return Process(command, ready, why)


def _health(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and call_name(deco) in ("get", "route", "api_route") and deco.args:
                    path = literal(deco.args[0])
                    if isinstance(path, str) and "{" not in path and any(w in path.lower() for w in HEALTH_WORDS):
                        return path
    return None


def _takes_port(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) in ("add_argument", "option") and \
                any(literal(a) == "--port" for a in node.args):
            return True
    return False
