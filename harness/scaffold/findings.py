"""What ``jobquake init`` found in a project: the one shape every reader fills and ``render`` reads."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Task:
    """A Celery task: where it is, its name, its parameters."""

    module: str
    function: str
    name: str | None
    params: list[str]


@dataclass
class Table:
    """A SQLAlchemy table: its Python name, SQL name, columns (name, is_primary_key)."""

    module: str
    variable: str
    name: str
    columns: list[tuple[str, bool]]


@dataclass
class Function:
    """A module-level function and its parameters (name, annotation text, has a default)."""

    module: str
    name: str
    params: list[tuple[str, str, bool]]
    body: ast.FunctionDef = field(repr=False, compare=False)


@dataclass
class Findings:
    """What the scan found; ``None`` / empty where nothing was."""

    root: Path
    project: str | None = None
    has_jobquake_section: bool = False
    has_pytest_config: bool = False
    celery_app: tuple[str, str] | None = None  # (module, variable)
    tasks: list[Task] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    schema_function: str | None = None  # "module:function"
    env_vars: dict[str, float | str | None] = field(default_factory=dict)  # name -> default in the code
    final_states: tuple[str, ...] | None = None
    processes: dict[str, str | None] = field(default_factory=dict)  # module -> its "ready" log text
    functions: list[Function] = field(default_factory=list)
    model_clients: set[str] = field(default_factory=set)  # the providers' client packages the app imports
