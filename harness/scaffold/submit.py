"""How the scenarios submit a job: the app's own function that writes a new job row, and its arguments.

A function writes the job row when it builds the job's ORM object (then
adds it to a session), calls ``insert(<table>)`` or runs ``INSERT INTO``.
Service functions are preferred over web handlers (a handler expects a
request and its framework's injections). A parameter that is a database
session is passed a session from the app's own factory; one typed as a
pydantic model gets a dict of its fields. Where only a handler that needs
more (a ``Request``, an authenticated user) writes the job, init writes an
adapter with named TODOs instead of pointing at the handler.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from harness.scaffold.findings import Findings, Function, Table

SESSION_TYPES = ("Session", "AsyncSession", "Connection")
UNCALLABLE_TYPES = ("Request", "Response", "BackgroundTasks", "WebSocket", "HttpRequest", "User", "Principal")
TODO = "TODO(jobquake init)"


@dataclass
class Submit:
    """The function the scenarios submit through, and what to pass it."""

    function: Function | None
    why: str
    args: list[str] = field(default_factory=list)  # lines of the job_args dict, each "'name': value,"
    todos: list[str] = field(default_factory=list)
    adapter: bool = False  # the scenarios call an adapter init wrote (the function is a handler)
    text: str = ""  # the adapter, where a reader wrote it whole


def choose(found: Findings, job: Table | None) -> Submit:
    """The submit function for ``job`` (the job table), or a reason why there is none."""
    if found.submit is not None:  # a framework's reader knows it (Django: the function that saves and queues)
        return _with_args(found, found.submit, f"found: {found.submit.module}.{found.submit.name} saves a new job "
                                               f"and queues it")
    if found.adapter is not None:  # a reader knows the view that takes a new job, and how to call it
        adapter = found.adapter
        return Submit(None, adapter.why, list(adapter.args), list(adapter.todos), adapter=True, text=adapter.text)
    if job is None:
        return Submit(None, f"{TODO}: 'module:function' that takes a new job and returns its id",
                      todos=["scenarios/conftest.py SUBMIT: no job table was found, so no function writing to it"])
    task_functions = {(t.module, t.function) for t in found.tasks}
    writers = [fn for fn in found.functions if not fn.name.startswith("_") and (fn.module, fn.name) not in
               task_functions and fn.module not in found.processes and writes_to(fn, job)]
    services = [fn for fn in writers if fn.route is None and not _needs_request(fn)]
    handlers = [fn for fn in writers if fn not in services]
    if services:
        fn = min(services, key=lambda f: _unknown_params(found, f))
        return _with_args(found, fn, f"found: {fn.module}.{fn.name} writes a new {job.name} row")
    callers = [h for h in found.functions if h.route and _calls(h, {w.name for w in writers})]
    for fn in [*handlers, *callers]:
        if not _needs_request(fn):
            return _with_args(found, fn, f"found: {fn.module}.{fn.name} ({fn.route or 'a handler'}) writes a new "
                                         f"{job.name} row; it is called with a session and its body, as a request would")
    if handlers or callers:
        fn = (handlers or callers)[0]
        return Submit(fn, f"found: only {fn.module}.{fn.name} ({fn.route or 'a web handler'}) writes a new "
                          f"{job.name} row, and it needs a request: the scenarios call the adapter "
                          f"scenarios/submit_adapter.py", adapter=True,
                      todos=[f"scenarios/submit_adapter.py submit(): do what {fn.module}.{fn.name} does with a "
                             f"request, and return the new job's id"])
    return Submit(None, f"{TODO}: 'module:function' that takes a new job and returns its id",
                  todos=["scenarios/conftest.py SUBMIT: no function writing to the job table was found"])


def writes_to(fn: Function, table: Table) -> bool:
    """True when ``fn`` inserts into ``table``: ``insert(<its variable>)``, ``<its class>(...)`` or SQL."""
    for node in ast.walk(fn.body):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "insert" \
                and any(isinstance(a, ast.Name) and a.id == table.variable for a in node.args):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == table.variable:
            return True  # an ORM object of the job's class is built here (then added to a session)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                f"insert into {table.name}" in " ".join(node.value.lower().split()):
            return True
    return False


def _calls(fn: Function, names: set[str]) -> bool:
    return any(isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", None)) in names
               for n in ast.walk(fn.body))


def _needs_request(fn: Function) -> bool:
    """A parameter no scenario can pass: the framework's request, or an injection other than a session."""
    for name, annotation, _ in fn.params:
        names = {part.rsplit(".", 1)[-1] for part in re.split(r"[\[\],|\s]+", annotation) if part}
        if names & set(UNCALLABLE_TYPES):
            return True
    for arg, default in zip(reversed(fn.body.args.args), reversed(fn.body.args.defaults)):
        if isinstance(default, ast.Call) and getattr(default.func, "id", "") in ("Depends", "Security") and \
                not _is_session(arg.arg, ast.unparse(arg.annotation) if arg.annotation else ""):
            return True
    return False


def _is_session(name: str, annotation: str) -> bool:
    return any(word in annotation for word in SESSION_TYPES) or (not annotation and name in ("db", "session"))


def _unknown_params(found: Findings, fn: Function) -> int:
    return sum(1 for name, annotation, has_default in fn.params
               if not has_default and not _is_session(name, annotation) and _sample(found, name, annotation) is None)


def _with_args(found: Findings, fn: Function, why: str) -> Submit:
    submit = Submit(fn, why)
    for name, annotation, has_default in fn.params:
        if has_default or _is_session(name, annotation):
            continue  # a session comes from the app's own factory (conftest.py SESSION)
        value = _sample(found, name, annotation)
        if value is None:
            submit.todos.append(f"scenarios/conftest.py job_args: a value for {fn.name}'s argument {name!r}")
            submit.args.append(f"{name!r}: None,  # {TODO}: a value for {name} ({annotation or 'no type given'})")
        else:
            submit.args.append(f"{name!r}: {value},")
    return submit


def _sample(found: Findings, name: str, annotation: str, depth: int = 0) -> str | None:
    base = annotation.replace(" ", "")
    if base.startswith("Optional[") and base.endswith("]"):
        base = base[len("Optional["):-1]
    base = base.split("|")[0]
    if base == "str":
        return f'f"{name} {{n}}"'
    if base == "int":
        return "n"
    if base == "float":
        return "float(n)"
    if base == "bool":
        return "False"
    if base.startswith(("list[str]", "List[str]", "Sequence[str]")):
        return f'[f"{name} {{n}}, first"]'
    if base in found.body_models and depth < 2:
        fields = [(f, _sample(found, f, a, depth + 1)) for f, a, has_default in found.body_models[base]
                  if not has_default]
        if any(value is None for _, value in fields):
            return None
        return "{" + ", ".join(f"{f!r}: {value}" for f, value in fields) + "}"
    return None


def session_factory(found: Findings, submit: Submit) -> str | None:
    """The app's session factory, when the submit function takes a session."""
    fn = submit.function
    if fn is None or submit.adapter:
        return None
    factories = found.session_factories or found.session_generators  # a sessionmaker first, else a get_db
    if any(_is_session(name, annotation) for name, annotation, _ in fn.params) and factories:
        return factories[0]
    return None
