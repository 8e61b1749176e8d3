"""What ``jobquake init`` found in a project: the one shape every reader fills and ``render`` reads."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Task:
    """A Celery task: where it is, its name, its parameters, its decorator's options (literals)."""

    module: str
    function: str
    name: str | None
    params: list[str]
    options: dict[str, object] = field(default_factory=dict)


@dataclass
class Table:
    """A SQLAlchemy table: its Python name, SQL name, columns (name, is_primary_key)."""

    module: str
    variable: str
    name: str
    columns: list[tuple[str, bool]]
    types: dict[str, str] = field(default_factory=dict)  # column -> the type the class annotates it with


@dataclass
class Function:
    """A module-level function and its parameters (name, annotation text, has a default)."""

    module: str
    name: str
    params: list[tuple[str, str, bool]]
    body: ast.FunctionDef = field(repr=False, compare=False)
    route: str | None = None  # "POST /recaps" when a web framework routes requests to it


@dataclass
class EnvVar:
    """An environment variable the app reads: its default there, where it is read, its type."""

    name: str
    default: object = None
    source: str = ""  # "recaps.config.Settings.stale_after_s", ".env", "os.getenv in recaps.db"...
    annotation: str = ""  # the type the code gives it, where it says ("float", "timedelta"...)
    required: bool = False  # a settings field without a default: the app does not start without it


@dataclass
class Process:
    """A way the app runs as a long-lived process: its command, how it says it is ready."""

    command: str  # a template: {port} is the port jobquake gives it
    ready: str | None  # "log:<text>", "http:/path", "tcp", or None when unknown
    why: str  # what the scan found


@dataclass
class Adapter:
    """The adapter a reader writes when only a view that needs a request takes a new job."""

    text: str  # scenarios/submit_adapter.py
    why: str  # what was found: conftest.py's comment on SUBMIT
    args: list[str] = field(default_factory=list)  # lines of the job_args dict
    todos: list[str] = field(default_factory=list)
    view: ast.ClassDef | None = field(default=None, repr=False, compare=False)  # the view it calls


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
    schema_command: str | None = None  # e.g. "alembic upgrade head"
    env_vars: dict[str, float | str | None] = field(default_factory=dict)  # name -> default in the code
    env_details: dict[str, EnvVar] = field(default_factory=dict)
    env_files: list[str] = field(default_factory=list)  # dotenv files the app's settings load
    final_states: tuple[str, ...] | None = None
    state_values: dict[str, tuple[str, ...]] = field(default_factory=dict)  # an Enum's name -> its values
    processes: dict[str, str | None] = field(default_factory=dict)  # module -> its "ready" log text
    commands: dict[str, Process] = field(default_factory=dict)  # process name -> how it runs (web, beat...)
    functions: list[Function] = field(default_factory=list)
    model_clients: set[str] = field(default_factory=set)  # the providers' client packages the app imports
    # Celery, as the code configures it: settings (literal values, None where not literal),
    # beat entries (name -> seconds, None where not read), whether tasks retry
    celery_conf: dict[str, object] = field(default_factory=dict)
    beat_entries: dict[str, float | None] = field(default_factory=dict)
    retries: bool = False
    task_call_keywords: dict[str, set[str]] = field(default_factory=dict)  # task function -> keywords callers pass
    # paid calls as the code makes them
    paid_timeouts: set[float] = field(default_factory=set)  # timeouts written in the code's calls
    client_default_timeouts: set[float] = field(default_factory=set)  # of clients built without one
    model_names: set[str] = field(default_factory=set)
    provider_urls: set[str] = field(default_factory=set)  # model endpoints hard-coded in the code
    session_factories: list[str] = field(default_factory=list)  # "module:name" of a sessionmaker
    session_generators: list[str] = field(default_factory=list)  # "module:name" of a function yielding a session
    body_models: dict[str, list[tuple[str, str, bool]]] = field(default_factory=dict)  # pydantic models' fields

    # what a framework's reader (Django) knows beyond the Python sources' shapes
    framework: str | None = None  # "django": named on init's summary line
    final_states_why: str = ""  # where final_states came from, when not a constant of literal states
    env_values: dict[str, tuple[str, str]] = field(default_factory=dict)  # var -> (value, why): over the roles
    submit: Function | None = None  # the function that takes a new job, where a reader knows it
    adapter: Adapter | None = None  # or the adapter that calls the view taking it (Django REST framework)
    scenario_values: dict[str, str] = field(default_factory=dict)  # template placeholders a reader fills
    scenario_files: dict[str, str] = field(default_factory=dict)  # more scenario templates: file name -> text
    env_todos: list[str] = field(default_factory=list)  # what the app's environment cannot reach (a TODO each)
    amqp_broker: str | None = None  # where the code names a RabbitMQ broker (jobquake runs Redis)
    database_built_from_parts: str | None = None  # where the settings build a database URL from host and port

    def add_env(self, name: str, default: object = None, *, source: str = "", annotation: str = "",
                override: bool = False, required: bool = False) -> None:
        """Note a variable the app reads; the first reader to name it wins, unless ``override``."""
        if name in self.env_vars and not override:
            known = self.env_details.get(name)
            if known is not None and required:
                known.required = True  # one read that raises when it is unset is enough
            if known is not None and self.env_vars[name] is None and default is not None:
                self.env_vars[name] = default  # a default found later is still worth having
            return
        known = self.env_details.get(name)
        self.env_vars[name] = default
        self.env_details[name] = EnvVar(name, default, source, annotation or (known.annotation if known else ""),
                                        required or bool(known and known.required and default is None))
