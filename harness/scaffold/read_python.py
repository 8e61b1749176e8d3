"""Reader: the project's Python sources, as syntax trees (Celery app, tasks, tables, env reads, mains)."""
from __future__ import annotations

import ast

from harness.scaffold.findings import Findings, Function, Table, Task
from harness.scaffold.project import Project

# the providers' official clients: each costs most of a second to import, so the zygote should have them
MODEL_CLIENTS = {"openai", "anthropic"}
ENV_READERS = {"getenv", "get", "environ", "_get", "env", "setting", "seconds", "get_env"}


def read(project: Project, found: Findings) -> None:
    for module, tree in project.modules:
        _Module(module, tree, found).visit_all()


def _call_name(node: ast.AST) -> str | None:
    """``f`` for ``f(...)``, ``x.f`` -> ``f``."""
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal(node: ast.AST | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError):
        return None


def _is_env_name(text: object) -> bool:
    return isinstance(text, str) and len(text) > 3 and "_" in text and text.replace("_", "").isalnum() \
        and text.isupper() and not text[0].isdigit()


class _Module:
    """One file's contribution to the findings."""

    def __init__(self, module: str, tree: ast.Module, found: Findings):
        self.module, self.tree, self.found = module, tree, found
        dump = ast.dump(tree)
        self.reads_environ = "environ" in dump or "getenv" in dump

    def visit_all(self) -> None:
        for node in self.tree.body:
            if isinstance(node, ast.Assign):
                self._assignment(node.targets[0], node.value)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._assignment(node.target, node.value)
            elif isinstance(node, ast.FunctionDef):
                self._function(node)
            elif isinstance(node, ast.ClassDef):
                self._mapped_class(node)
            elif isinstance(node, ast.If) and "__main__" in ast.dump(node.test):
                self.found.processes[self.module] = self._ready_text()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                self._env_read(node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self._imports(node)
        for name in environ_subscripts(self.tree):
            self.found.env_vars.setdefault(name, None)

    def _imports(self, node: ast.Import | ast.ImportFrom) -> None:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        self.found.model_clients.update(n.split(".")[0] for n in names if n.split(".")[0] in MODEL_CLIENTS)

    def _assignment(self, target: ast.expr, value: ast.expr) -> None:
        if not isinstance(target, ast.Name):
            return
        if isinstance(value, ast.Call) and _call_name(value) == "Celery" and self.found.celery_app is None:
            self.found.celery_app = (self.module, target.id)
        elif isinstance(value, ast.Call) and _call_name(value) == "Table" and value.args:
            name = _literal(value.args[0])
            columns = [(str(_literal(c.args[0])), any(k.arg == "primary_key" and _literal(k.value) is True
                                                      for k in c.keywords))
                       for c in value.args[1:] if isinstance(c, ast.Call) and _call_name(c) == "Column"
                       and c.args and isinstance(_literal(c.args[0]), str)]
            if isinstance(name, str):
                self.found.tables.append(Table(self.module, target.id, name, columns))
        elif any(word in target.id.upper() for word in ("TERMINAL", "FINAL", "END_STATES", "DONE_STATES")):
            states = _literal(value)
            if isinstance(states, (tuple, list, set, frozenset)) and states and \
                    all(isinstance(s, str) for s in states) and self.found.final_states is None:
                self.found.final_states = tuple(states)

    def _mapped_class(self, node: ast.ClassDef) -> None:
        """A declarative ORM class: ``__tablename__`` and its ``mapped_column`` / ``Column`` attributes."""
        name, columns = None, []
        for item in node.body:
            target = item.targets[0] if isinstance(item, ast.Assign) else getattr(item, "target", None)
            value = getattr(item, "value", None)
            if not isinstance(target, ast.Name) or value is None:
                continue
            if target.id == "__tablename__":
                name = _literal(value)
            elif isinstance(value, ast.Call) and _call_name(value) in ("mapped_column", "Column"):
                explicit = next((_literal(a) for a in value.args if isinstance(_literal(a), str)), None)
                primary = any(k.arg == "primary_key" and _literal(k.value) is True for k in value.keywords)
                columns.append((explicit or target.id, primary))
        if isinstance(name, str) and columns:
            # the class name is what `insert(...)` / `session.add(...)` name in the code
            self.found.tables.append(Table(self.module, node.name, name, columns))

    def _function(self, node: ast.FunctionDef) -> None:
        args = node.args
        defaults = len(args.defaults)
        plain = args.args
        params = [(a.arg, ast.unparse(a.annotation) if a.annotation else "",
                   i >= len(plain) - defaults) for i, a in enumerate(plain)]
        params += [(a.arg, ast.unparse(a.annotation) if a.annotation else "", d is not None)
                   for a, d in zip(args.kwonlyargs, args.kw_defaults)]
        for deco in node.decorator_list:
            name = _call_name(deco.func if isinstance(deco, ast.Call) else deco)
            if name in ("task", "shared_task"):
                task_name = next((_literal(k.value) for k in getattr(deco, "keywords", []) if k.arg == "name"),
                                 None)
                self.found.tasks.append(Task(self.module, node.name, task_name, [p[0] for p in params]))
                return
        if "create_all" in ast.dump(node) and len(params) >= 1 and self.found.schema_function is None:
            self.found.schema_function = f"{self.module}:{node.name}"
        self.found.functions.append(Function(self.module, node.name, params, node))

    def _env_read(self, node: ast.Call) -> None:
        """``os.environ["X"]`` is a Subscript; the calls are getenv / environ.get / a settings helper."""
        if not node.args:
            return
        name = _literal(node.args[0])
        if not _is_env_name(name):
            return
        reader = _call_name(node)
        direct = reader in ("getenv", "get") and "environ" in ast.dump(node.func) or reader == "getenv"
        if direct or (self.reads_environ and reader in ENV_READERS):
            default = _literal(node.args[1]) if len(node.args) > 1 else None
            self.found.env_vars.setdefault(name, default)

    def _ready_text(self) -> str | None:
        """A string constant of the module that says it is ready (what a log readiness check waits for)."""
        for node in ast.walk(self.tree):
            text = _literal(node) if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and "ready" in text.lower() and len(text) < 80 and "%" not in text:
                return text
        return None


def environ_subscripts(tree: ast.Module) -> list[str]:
    """``os.environ["X"]`` names (read by subscript, not by a call)."""
    return [n.slice.value for n in ast.walk(tree) if isinstance(n, ast.Subscript) and
            "environ" in ast.dump(n.value) and isinstance(n.slice, ast.Constant) and _is_env_name(n.slice.value)]
