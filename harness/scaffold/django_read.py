"""Reader: a Django project (``manage.py``), read from its source like every other reader.

What it adds to the findings: the settings module ``manage.py`` names
(``DJANGO_SETTINGS_MODULE``, so the submit process can set Django up); the
environment variables the settings read through django-environ,
python-decouple or dj-database-url, with the database URL's given as a
libpq URL (``{database_dsn}``, what dj-database-url parses); the schema by
``manage.py migrate``; the job table among the models (``django_models``,
``django_jobs``); the function that saves a job and queues it (directly or
in ``transaction.on_commit``); the web process and celery beat
(``django_processes``); and for the scenarios the Django failpoint at the
commit, a row the table accepts, and a scenario of its own (the commit race).
"""
from __future__ import annotations

import ast
from pathlib import Path

from harness.scaffold import django_drf, django_jobs, django_models, django_processes, django_settings, django_sweep, \
    django_templates, templates
from harness.scaffold.findings import Findings, Function, Table
from harness.scaffold.project import SKIP_DIRS, Project

AUTOCOMMIT = "the submit path commits in autocommit before it queues: no commit to race"
TRANSACTIONAL = ("atomic", "on_commit", "delay_on_commit", "apply_async_on_commit")  # the names that say so
ENQUEUE = ("delay", "apply_async", "send_task", "on_commit", "delay_on_commit", "apply_async_on_commit")


def read(project: Project, found: Findings) -> None:
    manage = _manage_py(project.root)
    if manage is None:
        return
    found.framework = "django"
    rel = manage.relative_to(project.root)
    prefix = "".join(f"{part}." for part in rel.parts[:-1])  # a manage.py in backend/: its modules' prefix
    found.processes.pop(prefix + "manage", None)  # Django's command line, not a process of the app
    if found.celery_app is not None:  # imported from manage.py's folder: named from there
        found.celery_app = (found.celery_app[0].removeprefix(prefix), found.celery_app[1])
    settings = _settings_module(manage)
    found.schema_command = f"python {rel} migrate --noinput"
    if settings:
        found.env_values["DJANGO_SETTINGS_MODULE"] = (
            settings, "the settings manage.py uses: the submit process sets Django up with them")
    if prefix:
        found.env_values["PYTHONPATH"] = ("{root}/" + prefix.rstrip(".").replace(".", "/"),
                                          "manage.py's folder: where the project's modules are imported from")
    django_settings.read_environment(project, found, settings, prefix)
    _job_table(project, found, prefix, settings)
    found.commands.update(django_processes.processes(
        project.root, str(rel), found.celery_app[0] if found.celery_app else None,
        django_settings.has_setting(project, settings, prefix, "CELERY_BEAT_SCHEDULE")))
    hosts = django_settings.allowed_hosts(project, settings, prefix)
    if hosts is not None and "web" in found.commands:
        found.env_values[hosts[0]] = (hosts[1], "ALLOWED_HOSTS from it: the web process runs on loopback")
    found.scenario_values.update({"POOL_AT": "django.on_commit", "POOL_KIND": "Django connection"})
    found.scenario_files["test_commit_race.py"] = django_templates.COMMIT_RACE
    if _autocommits(project, found, settings, prefix):  # no transaction: the commit failpoints never fire
        found.scenario_values.update({"POOL_AT": "django.after_write",
                                      "POOL_MATCH": '{**app.submitter_match(), "table": jq.config.job_table}'})
        found.scenario_files["test_commit_race.py"] = templates.skipped(
            "A slow commit: a job's task must not run before its row can be seen.", AUTOCOMMIT)


def _autocommits(project: Project, found: Findings, settings: str | None, prefix: str) -> bool:
    """True when the known submit path writes the job in Django's autocommit: no ``atomic``, no
    ``on_commit`` / ``delay_on_commit`` in it, and no ``ATOMIC_REQUESTS`` in the settings."""
    if found.submit is not None:
        path: list[ast.AST] = [found.submit.body]
    elif found.adapter is not None and found.adapter.view is not None:
        path = [found.adapter.view]
    else:
        return False  # nothing known: the scenarios stay as they are
    names = {getattr(n, "attr", getattr(n, "id", None)) for node in path for n in ast.walk(node)}
    return not names & set(TRANSACTIONAL) and not django_settings.atomic_requests(project, settings, prefix)


def _manage_py(root: Path) -> Path | None:
    candidates = [p for p in sorted(root.rglob("manage.py"), key=lambda p: len(p.parts))
                  if not any(part in SKIP_DIRS or part.startswith(".") for part in p.relative_to(root).parts[:-1])]
    return candidates[0] if candidates else None


def _settings_module(manage: Path) -> str | None:
    """The module ``manage.py`` sets as ``DJANGO_SETTINGS_MODULE``."""
    for node in ast.walk(ast.parse(manage.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and len(node.args) == 2 and isinstance(node.args[0], ast.Constant) \
                and node.args[0].value == "DJANGO_SETTINGS_MODULE" and isinstance(node.args[1], ast.Constant):
            return str(node.args[1].value)
    return None


def _job_table(project: Project, found: Findings, prefix: str, settings: str | None) -> None:
    models, enums = django_models.read_models(project, prefix)
    task_text = " ".join(ast.dump(t) for m, t in project.modules if "task" in m)
    job = django_jobs.job_model(models, task_text)
    if job is None:
        return
    model, state = job
    found.tables.insert(0, Table(model.module, model.name, model.table,
                                 [(f.column, f.primary) for f in model.fields] + _implicit_id(model)))
    states, why = django_jobs.final_states(state, project.modules, enums)
    if states:
        found.final_states, found.final_states_why = states, why
    found.submit = _submit(found, model, prefix)
    view = django_drf.find(project, model, prefix) if found.submit is None else None
    if view is not None:
        found.adapter = django_drf.adapter(view, model, "TODO(jobquake init)",
                                           django_settings.atomic_requests(project, settings, prefix))
    swept = _swept_row(project, found, prefix, settings, model, state.name, enums)
    found.scenario_values["STALE_JOB"] = django_jobs.required_row(model, swept)


def _swept_row(project: Project, found: Findings, prefix: str, settings: str | None,
               model: django_models.Model, state: str, enums: dict) -> dict[str, str]:
    """What a row the beat schedule's sweep picks up looks like, from the sweep task's query."""
    trees = django_settings.settings_trees(project, settings, prefix)
    for name in django_sweep.schedule_tasks(trees):
        for task in found.tasks:
            if name not in (task.name, f"{task.module.removeprefix(prefix)}.{task.function}"):
                continue
            function = next((n for m, t in project.modules if m == task.module for n in t.body
                             if isinstance(n, ast.FunctionDef) and n.name == task.function), None)
            picked = django_sweep.picked_row(function, model, state, enums) if function else {}
            if picked:
                return picked
    return {}


def _implicit_id(model: django_models.Model) -> list[tuple[str, bool]]:
    return [] if any(f.primary for f in model.fields) else [("id", True)]


def _submit(found: Findings, model: django_models.Model, prefix: str) -> Function | None:
    """A function that creates a job row and queues it, not a view (it would need a request)."""
    for fn in found.functions:
        if fn.name.startswith("_") or any(p[0] == "request" for p in fn.params) or "views" in fn.module:
            continue
        calls = [n for n in ast.walk(fn.body) if isinstance(n, ast.Call)]
        creates = any(model.name in ast.unparse(c.func) and (ast.unparse(c.func) == model.name or
                      ast.unparse(c.func).endswith(("objects.create", "objects.get_or_create"))) for c in calls)
        queues = any(isinstance(c.func, ast.Attribute) and c.func.attr in ENQUEUE for c in calls)
        if creates and queues:
            return Function(fn.module.removeprefix(prefix), fn.name, fn.params, fn.body)
    return None
