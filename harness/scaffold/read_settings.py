"""Reader: pydantic-settings classes, and the environment variables each field is read from.

For every class deriving from ``BaseSettings`` (directly or through
another settings class of the project): its ``model_config`` (or v1's
inner ``class Config``) gives ``env_prefix``, ``env_nested_delimiter`` and
``env_file``; each field is read from ``alias`` / ``validation_alias``
(every name of an ``AliasChoices``) or v1's ``env=``, else from the prefix
plus the field's name; a field whose type is a pydantic model of the
project is read field by field through the nested delimiter. Names are
upper-cased (pydantic-settings matches them case-insensitively by default).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, dotted, keywords, literal

CONFIG_CALLS = {"SettingsConfigDict", "ConfigDict", "dict"}
NESTING_LIMIT = 4


@dataclass
class _Settings:
    prefix: str = ""
    delimiter: str | None = None
    env_files: list[str] = field(default_factory=list)


def read(project: Project, found: Findings) -> None:
    classes = {node.name: (module, node) for module, tree in project.modules
               for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    for name, (module, node) in classes.items():
        if not _is_settings(name, classes, set()):
            continue
        settings = _config(name, classes)
        for env_file in settings.env_files:
            if env_file not in found.env_files:
                found.env_files.append(env_file)
        _fields(node, f"{module}.{name}", settings.prefix, settings, classes, found, depth=0)


def _base_names(node: ast.ClassDef) -> list[str]:
    return [dotted(b).rsplit(".", 1)[-1] for b in node.bases]


def _is_settings(name: str, classes: dict, seen: set[str]) -> bool:
    if name in seen or name not in classes:
        return False
    seen.add(name)
    bases = _base_names(classes[name][1])
    return "BaseSettings" in bases or any(_is_settings(b, classes, seen) for b in bases)


def _config(name: str, classes: dict) -> _Settings:
    """The class's settings config, its bases' first (a subclass overrides what it sets)."""
    node = classes[name][1]
    settings = _Settings()
    for base in _base_names(node):
        if base in classes and base != name:
            inherited = _config(base, classes)
            settings = _Settings(inherited.prefix, inherited.delimiter, list(inherited.env_files))
    for item in node.body:
        if isinstance(item, (ast.Assign, ast.AnnAssign)) and _target(item) == "model_config" and \
                isinstance(item.value, ast.Call) and call_name(item.value) in CONFIG_CALLS:
            _apply(settings, {k: literal(v) for k, v in keywords(item.value).items()})
        elif isinstance(item, ast.ClassDef) and item.name == "Config":
            _apply(settings, {_target(i): literal(i.value) for i in item.body
                              if isinstance(i, (ast.Assign, ast.AnnAssign)) and i.value is not None})
    return settings


def _apply(settings: _Settings, options: dict) -> None:
    if isinstance(options.get("env_prefix"), str):
        settings.prefix = options["env_prefix"]
    if isinstance(options.get("env_nested_delimiter"), str):
        settings.delimiter = options["env_nested_delimiter"]
    env_file = options.get("env_file")
    if isinstance(env_file, str):
        settings.env_files = [env_file]
    elif isinstance(env_file, (list, tuple)):
        settings.env_files = [f for f in env_file if isinstance(f, str)]


def _target(item: ast.Assign | ast.AnnAssign) -> str | None:
    target = item.targets[0] if isinstance(item, ast.Assign) else item.target
    return target.id if isinstance(target, ast.Name) else None


def _fields(node: ast.ClassDef, where: str, prefix: str, settings: _Settings, classes: dict,
            found: Findings, depth: int) -> None:
    for item in node.body:
        if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
            continue
        field_name, annotation = item.target.id, ast.unparse(item.annotation)
        if field_name == "model_config" or annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        aliases, default = _field_call(item.value)
        required = item.value is None or _is_required(item.value)
        nested = _nested_model(item.annotation, classes)
        if nested is not None and settings.delimiter and not aliases and depth < NESTING_LIMIT:
            _fields(classes[nested][1], f"{where}.{field_name}", f"{prefix}{field_name}{settings.delimiter}",
                    settings, classes, found, depth + 1)
            continue
        for env_name in aliases or [f"{prefix}{field_name}"]:
            found.add_env(env_name.upper(), default, source=f"{where}.{field_name}", annotation=annotation,
                          required=required and "Optional" not in annotation and "None" not in annotation)


def _field_call(value: ast.expr | None) -> tuple[list[str], object]:
    """(the names a field is read from, given explicitly; its default) from ``= d`` or ``= Field(...)``."""
    if value is None:
        return [], None
    if not (isinstance(value, ast.Call) and call_name(value) == "Field"):
        return [], _default(value)
    named = keywords(value)
    default = named.get("default", value.args[0] if value.args else None)
    aliases: list[str] = []
    for key in ("validation_alias", "alias", "env"):
        given = named.get(key)
        if given is None:
            continue
        if isinstance(given, ast.Call) and call_name(given) == "AliasChoices":
            aliases += [a for a in (literal(x) for x in given.args) if isinstance(a, str)]
        elif isinstance(literal(given), str):
            aliases.append(literal(given))  # type: ignore[arg-type]
        elif isinstance(literal(given), (list, tuple)):
            aliases += [a for a in literal(given) if isinstance(a, str)]  # type: ignore[union-attr]
        if aliases:
            break
    return aliases, _default(default)


def _is_required(value: ast.expr) -> bool:
    """``Field(...)`` or ``Field(description=...)`` without a default."""
    if not (isinstance(value, ast.Call) and call_name(value) == "Field"):
        return False
    named = keywords(value)
    first = value.args[0] if value.args else named.get("default")
    return "default_factory" not in named and (first is None or (isinstance(first, ast.Constant)
                                                                and first.value is Ellipsis))


def _default(node: ast.expr | None) -> object:
    """A literal default, or the literal inside ``SecretStr("...")`` / ``timedelta(...)``-style wrappers."""
    value = literal(node)
    if value is None and isinstance(node, ast.Call) and node.args and call_name(node) in ("SecretStr", "str",
                                                                                          "float", "int"):
        return literal(node.args[0])
    return value


def _nested_model(annotation: ast.expr, classes: dict) -> str | None:
    """The project's pydantic model a field holds (``Inner`` or ``Inner | None``), if any."""
    names = [dotted(n) for n in ast.walk(annotation) if isinstance(n, (ast.Name, ast.Attribute))]
    for name in names:
        short = name.rsplit(".", 1)[-1]
        if short in classes and "BaseModel" in _base_names(classes[short][1]):
            return short
    return None
