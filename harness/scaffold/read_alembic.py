"""Reader: Alembic migrations (an ``alembic.ini`` whose ``script_location`` holds an ``env.py``).

The schema is then the app's own migrations, ``alembic upgrade head``, run
with the app's environment pointing at the template database: its
``env.py`` finds the database the way it does in production.
"""
from __future__ import annotations

import configparser

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project


def read(project: Project, found: Findings) -> None:
    ini = project.root / "alembic.ini"
    if not ini.is_file():
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(ini)
    except configparser.Error:
        return
    location = parser.get("alembic", "script_location", fallback="alembic").replace("%(here)s", ".")
    if (project.root / location / "env.py").is_file():
        found.schema_command = "alembic upgrade head"
