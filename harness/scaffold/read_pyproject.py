"""Reader: the project's pyproject.toml (its name, an existing section) and pytest configuration."""
from __future__ import annotations

import tomllib

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project


def read(project: Project, found: Findings) -> None:
    root = project.root
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        data = tomllib.loads(pyproject.read_text())
        found.project = data.get("project", {}).get("name")
        found.has_jobquake_section = "jobquake" in data.get("tool", {})
        found.has_pytest_config = "ini_options" in data.get("tool", {}).get("pytest", {})
    found.has_pytest_config = found.has_pytest_config or any(
        (root / name).is_file() for name in ("pytest.ini", "tox.ini", "setup.cfg"))
