"""Reader: the project's Python sources (Celery app and tasks, tables, functions, mains, clients).

Module level only: the Celery app and its tasks with their decorator's
options, SQLAlchemy tables (Core ``Table`` or declarative classes), the
function that calls ``create_all``, a constant of final states and the
values of state enums, every function (and the web route it serves), the
modules with a ``__main__`` block, session factories, pydantic models,
and the model providers' clients the app imports.
"""
from __future__ import annotations

import ast
import re

from harness.scaffold.findings import Findings, Function, Table, Task
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, dotted, keywords, literal, params

# the providers' official clients: each costs most of a second to import, so the zygote should have them
MODEL_CLIENTS = {"openai", "anthropic", "ollama"}
ROUTE_METHODS = {"post", "put", "get", "patch", "delete", "route", "api_route", "websocket"}
SESSION_FACTORIES = {"sessionmaker", "async_sessionmaker", "scoped_session"}
FINAL_WORDS = ("TERMINAL", "FINAL", "END_STATES", "DONE_STATES")
READY_WORD = re.compile(r"\bready\b", re.IGNORECASE)  # "worker ready", not "already exists"
SERVING_CALLS = {"serve_forever", "run_forever", "run_app", "start_consuming", "loop_forever", "serve"}


def read(project: Project, found: Findings) -> None:
    for module, tree in project.modules:
        _Module(module, tree, found).visit_all()


def _yields_a_session(node: ast.FunctionDef) -> bool:
    """A dependency that yields a session (FastAPI's ``def get_db(): with Session(engine) as s: yield s``)."""
    yields = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(node))
    made = {call_name(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return yields and any(name and ("Session" in name or name in SESSION_FACTORIES) for name in made)


class _Module:
    """One file's contribution to the findings."""

    def __init__(self, module: str, tree: ast.Module, found: Findings):
        self.module, self.tree, self.found = module, tree, found

    def visit_all(self) -> None:
        for node in self.tree.body:
            if isinstance(node, ast.Assign):
                self._assignment(node.targets[0], node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._assignment(node.target, node.value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(node)
            elif isinstance(node, ast.ClassDef):
                self._class(node)
            elif isinstance(node, ast.If) and "__main__" in ast.dump(node.test) and self._long_lived():
                self.found.processes[self.module] = self._ready_text()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._imports(node)

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        self.found.model_clients.update(n.split(".")[0] for n in names if n.split(".")[0] in MODEL_CLIENTS)

    def _assignment(self, target: ast.expr, value: ast.expr) -> None:
        if not isinstance(target, ast.Name):
            return
        kind = call_name(value) if isinstance(value, ast.Call) else None
        if kind == "Celery" and self.found.celery_app is None:
            self.found.celery_app = (self.module, target.id)
        elif kind == "Table" and value.args:  # type: ignore[union-attr]
            self._core_table(target.id, value)  # type: ignore[arg-type]
        elif kind in SESSION_FACTORIES:
            self.found.session_factories.append(f"{self.module}:{target.id}")
        elif any(word in target.id.upper() for word in FINAL_WORDS):
            states = literal(value)
            if isinstance(states, (tuple, list, set, frozenset)) and states and \
                    all(isinstance(s, str) for s in states) and self.found.final_states is None:
                self.found.final_states = tuple(states)

    def _core_table(self, variable: str, value: ast.Call) -> None:
        name = literal(value.args[0])
        columns = [(str(literal(c.args[0])), _primary(c))
                   for c in value.args[1:] if isinstance(c, ast.Call) and call_name(c) == "Column"
                   and c.args and isinstance(literal(c.args[0]), str)]
        if isinstance(name, str):
            self.found.tables.append(Table(self.module, variable, name, columns))

    def _class(self, node: ast.ClassDef) -> None:
        bases = {dotted(b).rsplit(".", 1)[-1] for b in node.bases}
        if bases & {"Enum", "StrEnum"}:
            values = [literal(item.value) for item in node.body if isinstance(item, ast.Assign)]
            if values and all(isinstance(v, str) for v in values):
                self.found.state_values[node.name] = tuple(values)  # type: ignore[arg-type]
        elif "BaseModel" in bases:
            self.found.body_models[node.name] = [
                (item.target.id, ast.unparse(item.annotation), _has_default(item.value))
                for item in node.body if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]
        self._mapped_class(node)

    def _mapped_class(self, node: ast.ClassDef) -> None:
        """A declarative ORM class: ``__tablename__`` and its ``mapped_column`` / ``Column`` attributes;
        or a SQLModel table (``class Job(SQLModel, table=True)``): every annotated field is a column, and
        the table is named ``__tablename__`` or, as SQLModel names it, the class name lower-cased."""
        sqlmodel = any(k.arg == "table" and literal(k.value) is True for k in node.keywords)
        name: object = node.name.lower() if sqlmodel else None
        columns, types = [], {}
        for item in [*self._inherited_fields(node), *node.body] if sqlmodel else node.body:
            target = item.targets[0] if isinstance(item, ast.Assign) else getattr(item, "target", None)
            value = getattr(item, "value", None)
            if not isinstance(target, ast.Name):
                continue
            if target.id == "__tablename__" and value is not None:
                name = literal(value)
            elif isinstance(value, ast.Call) and call_name(value) in ("mapped_column", "Column"):
                explicit = next((literal(a) for a in value.args if isinstance(literal(a), str)), None)
                columns.append((explicit or target.id, _primary(value)))
            elif sqlmodel and isinstance(item, ast.AnnAssign) and _sqlmodel_column(item):
                column = _field_column(item.value) or target.id
                columns.append((column, _primary(item.value)))
                types[column] = ast.unparse(item.annotation)
        if isinstance(name, str) and columns:
            # the class name is what `insert(...)` / `session.add(...)` name in the code
            self.found.tables.append(Table(self.module, node.name, name, columns, types))

    def _inherited_fields(self, node: ast.ClassDef, depth: int = 0) -> list[ast.stmt]:
        """The fields of the module's own base classes (``class JobBase(SQLModel)`` under ``Job(JobBase, table=True)``)."""
        here = {c.name: c for c in self.tree.body if isinstance(c, ast.ClassDef)}
        out: list[ast.stmt] = []
        for base in (dotted(b) for b in node.bases):
            if base in here and base != node.name and depth < 4:
                out += self._inherited_fields(here[base], depth + 1) + here[base].body
        return out

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        found = params(node)
        route = None
        for deco in node.decorator_list:
            name = call_name(deco.func if isinstance(deco, ast.Call) else deco)
            if name in ("task", "shared_task"):
                options = keywords(deco) if isinstance(deco, ast.Call) else {}
                task_name = literal(options.get("name"))
                names = [p[0] for p in found]
                if options.get("bind") is not None and literal(options["bind"]) is True and names:
                    names = names[1:]  # bound tasks take the task itself first
                self.found.tasks.append(Task(self.module, node.name, task_name if isinstance(task_name, str)
                                             else None, names, {k: literal(v) for k, v in options.items()}))
                return
            if name in ROUTE_METHODS and isinstance(deco, ast.Call):
                path = literal(deco.args[0]) if deco.args else None
                route = f"{name.upper()} {path}" if isinstance(path, str) else name.upper()
        if "create_all" in ast.dump(node) and self.found.schema_function is None:
            self.found.schema_function = f"{self.module}:{node.name}"
        if isinstance(node, ast.FunctionDef) and _yields_a_session(node):
            self.found.session_generators.append(f"{self.module}:{node.name}")
        self.found.functions.append(Function(self.module, node.name, found, node, route))  # type: ignore[arg-type]

    def _long_lived(self) -> bool:
        """A main that serves or loops (``while True``, ``serve_forever``, ``uvicorn.run``...), not a
        one-off script (a migration, a seed): only those are processes the app runs as."""
        for node in ast.walk(self.tree):
            if isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and node.test.value:
                return True
            if isinstance(node, ast.Call) and call_name(node) in SERVING_CALLS:
                return True
        return self._ready_text() is not None

    def _ready_text(self) -> str | None:
        """A string constant of the module that says it is ready (what a log readiness check waits for)."""
        for node in ast.walk(self.tree):
            text = literal(node) if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and READY_WORD.search(text) and len(text) < 80 and "%" not in text:
                return text
        return None


def _primary(value: ast.expr | None) -> bool:
    """``primary_key=True`` in a column's (or a SQLModel ``Field``'s) call."""
    return isinstance(value, ast.Call) and any(k.arg == "primary_key" and literal(k.value) is True
                                               for k in value.keywords)


def _sqlmodel_column(item: ast.AnnAssign) -> bool:
    """A SQLModel table's annotated attribute that is a column: not a ``ClassVar``, not a ``Relationship``."""
    annotation = ast.unparse(item.annotation)
    if annotation.startswith(("ClassVar", "typing.ClassVar")) or item.target.id.startswith("_"):  # type: ignore[union-attr]
        return False
    return not (isinstance(item.value, ast.Call) and call_name(item.value) == "Relationship")


def _field_column(value: ast.expr | None) -> str | None:
    """The column name a SQLModel ``Field(sa_column=Column("name", ...))`` gives, if it gives one."""
    given = keywords(value).get("sa_column") if isinstance(value, ast.Call) else None
    if isinstance(given, ast.Call) and given.args and isinstance(literal(given.args[0]), str):
        return literal(given.args[0])  # type: ignore[return-value]
    return None


def _has_default(value: ast.expr | None) -> bool:
    """A pydantic field with a default: ``= x``, ``Field(x)``, ``Field(default=...)``, not ``Field(...)``."""
    if value is None:
        return False
    if isinstance(value, ast.Call) and call_name(value) == "Field":
        given = keywords(value)
        first = value.args[0] if value.args else given.get("default")
        return ("default_factory" in given) or (first is not None and not (
            isinstance(first, ast.Constant) and first.value is Ellipsis))
    return True
