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
class Process:
    """A way the app runs as a long-lived process: its command, how it says it is ready."""

    command: str  # a template: {port} is the port jobquake gives it
    ready: str | None  # "log:<text>", "http:/path", "tcp", or None when unknown
    why: str  # what the scan found


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
    # what a framework's reader (Django) knows beyond the Python sources' shapes
    framework: str | None = None  # "django": named on init's summary line
    final_states_why: str = ""  # where final_states came from, when not a constant of literal states
    schema_command: str | None = None  # the app's own migrations, run in the template database
    env_values: dict[str, tuple[str, str]] = field(default_factory=dict)  # var -> (value, why): over the roles
    commands: dict[str, Process] = field(default_factory=dict)  # process name -> how it runs (web, beat...)
    submit: Function | None = None  # the function that takes a new job, where a reader knows it
    scenario_values: dict[str, str] = field(default_factory=dict)  # template placeholders a reader fills
    scenario_files: dict[str, str] = field(default_factory=dict)  # more scenario templates: file name -> text
    env_todos: list[str] = field(default_factory=list)  # what the app's environment cannot reach (a TODO each)
