"""What a Python block of the docs may use: real modules, real names, faults built with real arguments.

``problems(source)`` compiles the block and answers with every name that
does not exist: an import that fails, a ``harness._private`` module, a
``jq.<attr>.<attr>`` that ``harness.Run``'s type hints do not lead to, a
``jq.faults.<fault>(...)`` call whose arguments the fault refuses (the fault
is built, not injected: its own checks run), a method called on such a fault
or on a value ``jq`` returned that its class lacks, an invariant named in a
marker that does not exist.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
import typing
from typing import Any


class _Placeholders(dict):
    """Names a block uses but does not define (``job_id``, ``refapp``) evaluate to a stand-in string."""

    def __missing__(self, name: str) -> Any:
        return getattr(builtins, name, f"<{name}>")


def _type_of(hint: Any) -> Any:
    """``Faults`` from ``Faults``, ``Gate | None``, ``Optional[Gate]``."""
    if isinstance(hint, type):
        return hint
    return next((a for a in typing.get_args(hint) if isinstance(a, type)), hint)


_UNTYPED = object()


def _instance_attributes(cls: type) -> set[str]:
    """``self.x = ...`` assignments in the class's ``__init__``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    except (OSError, TypeError):
        return set()
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}


def resolve(path: list[str]) -> Any:
    """``["faults", "kill_worker"]`` -> what ``jq.faults.kill_worker`` is, reached from ``Run`` by type hints."""
    from harness import Run

    owner: Any = Run
    for name in path:
        hints = typing.get_type_hints(owner) if isinstance(owner, type) else {}
        if owner is _UNTYPED:
            return _UNTYPED
        if name in hints:
            owner = _type_of(hints[name])
        elif hasattr(owner, name):
            owner = getattr(owner, name)
        elif isinstance(owner, type) and name in _instance_attributes(owner):
            owner = _UNTYPED  # set in __init__ without an annotation: it exists, its type is not known
        else:
            raise LookupError(f"jq.{'.'.join(path)}: {getattr(owner, '__name__', owner)} has no {name!r}")
    return owner


def _chain(node: ast.AST) -> list[str] | None:
    """``jq.a.b`` -> ["a", "b"]; None when the expression does not start at ``jq``."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return names[::-1] if isinstance(node, ast.Name) and node.id == "jq" else None


def _imports(tree: ast.Module) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(part.startswith("_") for m in modules for part in m.split(".")[1:]):
                found.append(f"line {node.lineno}: a private module: {ast.unparse(node)}")
                continue
            try:
                exec(compile(ast.Module([node], []), "<docs>", "exec"), {})  # noqa: S102 - the docs' own import
            except ImportError as exc:
                found.append(f"line {node.lineno}: {ast.unparse(node)}: {exc}")
    return found


def _fault_call(node: ast.Call, namespace: dict) -> tuple[list[str], type | None]:
    from harness.faults import FAULTS

    name = node.func.attr  # type: ignore[attr-defined]
    if name not in FAULTS:
        return ([] if hasattr(resolve(["faults"]), name) else [f"no fault {name!r}"]), None
    args = [_value(a, namespace) for a in node.args]
    kwargs = {k.arg: _value(k.value, namespace) for k in node.keywords if k.arg}
    try:
        FAULTS[name](*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - whatever the fault says is the finding
        return [f"line {node.lineno}: {ast.unparse(node)}: {type(exc).__name__}: {exc}"], FAULTS[name]
    return [], FAULTS[name]


def _value(node: ast.expr, namespace: dict) -> Any:
    """An argument as written (literals, moments), or a stand-in where it needs the scenario's own values."""
    try:
        return eval(ast.unparse(node), {}, namespace)  # noqa: S307 - the docs' own argument expression
    except Exception:  # noqa: BLE001 - ``worker.name``, ``lambda``... of a scenario: a stand-in string
        return f"<{ast.unparse(node)}>"


def _namespace() -> _Placeholders:
    import harness.faults as faults

    return _Placeholders({n: getattr(faults, n) for n in ("InFlight", "AtFailpoint", "Now", "Queued")})


def _returned(path: list[str]) -> type | None:
    """The class a ``jq.<path>(...)`` call returns, from its annotation; None when unknown."""
    try:
        hints = typing.get_type_hints(resolve(path))
    except Exception:  # noqa: BLE001 - no usable annotation: nothing to check the value against
        return None
    returned = _type_of(hints.get("return"))
    return returned if inspect.isclass(returned) and returned.__module__.startswith("harness") else None


def _calls(tree: ast.Module) -> tuple[list[str], dict[str, type]]:
    """Problems of every ``jq...`` name and fault call, and the class of each variable a jq call made."""
    found, made, namespace = [], {}, _namespace()
    for node in ast.walk(tree):
        chain = _chain(node) if isinstance(node, ast.Attribute) else None
        if chain:
            try:
                resolve(chain)
            except LookupError as exc:
                found.append(f"line {node.lineno}: {exc}")
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            path = _chain(node.value.func)
            if path and path[:1] == ["faults"] and len(path) == 2:
                _problems, cls = _fault_call(node.value, namespace)
                made[node.targets[0].id] = cls
            elif path:
                made[node.targets[0].id] = _returned(path)
        if isinstance(node, ast.Call):
            path = _chain(node.func)
            if path and path[:1] == ["faults"] and len(path) == 2:
                found += _fault_call(node, namespace)[0]
    return found, {k: v for k, v in made.items() if v is not None}


def _methods(tree: ast.Module, made: dict[str, type]) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in made:
            cls = made[node.value.id]
            if not hasattr(cls, node.attr):
                found.append(f"line {node.lineno}: {node.value.id}.{node.attr}: {cls.__name__} has no {node.attr!r}")
    return found


def _markers(tree: ast.Module) -> list[str]:
    from harness.checks import CHECKERS

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("checks", "skip_checks") and isinstance(node.value, ast.List):
            names = [ast.literal_eval(e) for e in node.value.elts]
            found += [f"no invariant {n!r}" for n in names if n not in CHECKERS]
        if isinstance(node, ast.keyword) and node.arg == "invariant":
            name = ast.literal_eval(node.value)
            found += [] if name in CHECKERS else [f"no invariant {name!r}"]
    return found


def problems(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
        compile(tree, "<docs>", "exec")
    except SyntaxError as exc:
        return [f"does not compile: {exc}"]
    found, made = _calls(tree)
    return _imports(tree) + found + _methods(tree, made) + _markers(tree)


def is_scenario(source: str) -> bool:
    """A whole scenario: a module with a ``test_`` function that takes ``jq``."""
    tree = ast.parse(source)
    return any(isinstance(n, ast.FunctionDef) and n.name.startswith("test_") and
               any(a.arg == "jq" for a in n.args.args) for n in tree.body)


