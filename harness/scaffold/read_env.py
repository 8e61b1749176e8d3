"""Reader: environment variables the code reads by name, and the defaults it gives them.

Read directly (``os.environ["X"]``, ``os.environ.get("X", d)``,
``os.getenv("X", d)``), through the usual libraries (python-decouple's
``config("X", default=d)``, environs' ``env.int("X", d)``), or through the
app's own helpers: a function whose first parameter reaches one of those
reads (``def _f(name, default): return os.environ.get(name, default)``),
found across the project and through helpers of helpers, so a call
``_f("APP_TIMEOUT_S", 60)`` anywhere names the variable and its default.

A library read with no default (``env("SECRET_KEY")``, ``env.str("X")``,
``config("X")``) raises when the variable is unset: the variable is
required, unless ``environ.Env(X=(cast, default))`` gives it a default.
"""
from __future__ import annotations

import ast

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, dotted, is_env_name, keywords, literal

LIBRARY_READERS = {"config", "env", "getenv"}  # decouple's config(), environs' env(), os.getenv
ENVIRONS_CASTS = {"str", "int", "float", "bool", "decimal", "list", "dict", "json", "url", "timedelta", "path"}


def read(project: Project, found: Findings) -> None:
    helpers = _helpers(project)
    schemes = scheme_defaults(project)
    for module, tree in project.modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                _call(module, node, helpers, found, schemes)
            elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                name = literal(node.slice)
                if is_env_name(name):
                    found.add_env(name, None, source=f"os.environ[...] in {module}")  # type: ignore[arg-type]


def _is_environ(node: ast.AST) -> bool:
    return dotted(node).split(".")[-1] == "environ"


def _direct_name(node: ast.Call) -> ast.expr | None:
    """The name argument of a direct read (``os.environ.get(n)``, ``os.getenv(n)``, a library's)."""
    if not node.args:
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("get", "setdefault", "pop") and _is_environ(func.value):
        return node.args[0]
    name = call_name(node)
    if name in LIBRARY_READERS or (isinstance(func, ast.Attribute) and dotted(func.value) == "env"
                                   and func.attr in ENVIRONS_CASTS):
        return node.args[0]
    return None


def _helpers(project: Project) -> set[str]:
    """Names of the project's functions whose first parameter is the name of a variable they read."""
    defs = [n for _, tree in project.modules for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.args.args]
    helpers: set[str] = set()
    while True:
        more = {d.name for d in defs if d.name not in helpers and _passes_first_param(d, helpers)}
        if not more:
            return helpers
        helpers |= more


def _passes_first_param(node: ast.FunctionDef | ast.AsyncFunctionDef, helpers: set[str]) -> bool:
    first = node.args.args[0].arg
    if first in ("self", "cls") and len(node.args.args) > 1:
        first = node.args.args[1].arg
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call):
            arg = _direct_name(inner)
            if arg is None and call_name(inner) in helpers and inner.args:
                arg = inner.args[0]
            if isinstance(arg, ast.Name) and arg.id == first:
                return True
        elif isinstance(inner, ast.Subscript) and _is_environ(inner.value) and \
                isinstance(inner.slice, ast.Name) and inner.slice.id == first:
            return True
    return False


def _call(module: str, node: ast.Call, helpers: set[str], found: Findings, schemes: dict[str, object]) -> None:
    arg = _direct_name(node)
    via = "os.environ" if arg is not None else ""
    if arg is None and call_name(node) in helpers and node.args:
        arg, via = node.args[0], f"{call_name(node)}()"
    name = literal(arg)
    if not is_env_name(name):
        return
    given = keywords(node).get("default", node.args[1] if len(node.args) > 1 else None)
    required = _raises_unset(node) and name not in schemes and not has_default(node)
    found.add_env(name, literal(given) if name not in schemes else schemes[name],  # type: ignore[arg-type]
                  source=f"{via or call_name(node)} in {module}", required=required)


def _raises_unset(node: ast.Call) -> bool:
    """A library read (decouple's ``config``, environs' / django-environ's ``env`` and its casts), not
    ``os.getenv`` / ``os.environ.get``, which give None."""
    func = node.func
    if isinstance(func, ast.Attribute):  # env.str("X"), env.int("X"): a cast of the library's reader
        return dotted(func.value) == "env" and func.attr in ENVIRONS_CASTS
    return call_name(node) in ("config", "env")


def has_default(node: ast.Call) -> bool:
    """True when a library read gives a default: ``default=``, or a second argument that is no cast
    (django-environ's ``env("X", bool)`` casts; decouple's ``config("X", "d")`` and environs'
    ``env.int("X", 3)`` default)."""
    if "default" in keywords(node):
        return True
    second = node.args[1] if len(node.args) > 1 else None
    return second is not None and not (isinstance(second, ast.Name) and call_name(node) == "env")


def scheme_defaults(project: Project) -> dict[str, object]:
    """Defaults given by django-environ's scheme: ``environ.Env(DEBUG=(bool, False))``."""
    out: dict[str, object] = {}
    for _, tree in project.modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and call_name(node) == "Env":
                out.update({k: literal(v.elts[1]) for k, v in keywords(node).items()
                            if isinstance(v, ast.Tuple) and len(v.elts) == 2})
    return out
