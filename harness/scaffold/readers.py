"""The readers ``scan`` runs, in order: each adds what it recognises to the one ``Findings``.

A reader is a function ``read(project, found)``: it looks at the project
(``Project``: the folder, its Python files parsed once) and fills
``Findings`` (tables, tasks, env vars, processes...), which ``render``
turns into the config and the scenarios. Another kind of app (another
framework's settings, models or migrations) is one more reader module
appended here; everything after the findings stays as it is.
"""
from __future__ import annotations

from typing import Callable

from harness.scaffold import (django_read, read_alembic, read_calls, read_celery, read_dotenv, read_env,
                              read_pyproject, read_python, read_repositories, read_settings, read_settings_built,
                              read_task_calls, read_web)
from harness.scaffold.findings import Findings
from harness.scaffold.project import Project

Reader = Callable[[Project, Findings], None]

READERS: list[Reader] = [
    read_pyproject.read,
    read_python.read,    # module level: Celery app and tasks, tables, functions, mains, clients
    read_repositories.read,  # a job row written through a repository class's method
    read_env.read,       # os.environ, getenv, decouple / environs, the app's own helpers
    read_settings.read,  # pydantic-settings classes
    read_dotenv.read,    # .env files (after the settings: they name the files they load)
    read_settings_built.read,  # a RabbitMQ broker, a database URL from parts, per-process secrets
    read_celery.read,    # Celery settings, beat schedule, retries
    read_task_calls.read,  # how tasks are queued: by keyword or by position
    read_alembic.read,   # migrations as the schema
    read_web.read,       # web apps, beat, --port mains (after read_celery: beat needs its schedule)
    read_calls.read,     # timeouts, model names, endpoints (after the env readers: model defaults)
    django_read.read,    # a Django project: settings, models, migrations, its processes
]
