"""Django models read from their source: tables, columns, choices, as ``migrate`` will create them.

A model is a class of a ``models`` module (or package) whose fields are
``models.XField(...)`` calls. Its table is ``Meta.db_table`` or
``<app label>_<model name, lower case>``; a field's column is its
``db_column``, else its name (``<name>_id`` for a foreign key). Choices
come from ``TextChoices`` / ``IntegerChoices`` classes (``choices=Status.choices``)
or a literal list of pairs. Defaults live in Python for Django (before
``db_default``), so the database has none: a row the harness inserts must
name every ``NOT NULL`` column, and ``required_row`` says with what.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from harness.scaffold.project import Project

CHOICES_BASES = {"TextChoices", "IntegerChoices", "Choices"}
RELATIONS = {"ForeignKey", "OneToOneField"}
NO_COLUMN = {"ManyToManyField", "GenericRelation", "GenericForeignKey"}
AUTO = {"AutoField", "BigAutoField", "SmallAutoField"}
TIMESTAMPS = {"DateTimeField", "DateField"}


@dataclass
class Field:
    """One model field as a column."""

    name: str
    column: str
    kind: str  # the field class: CharField, ForeignKey...
    primary: bool = False
    null: bool = False
    default: ast.expr | None = field(default=None, repr=False)
    auto: bool = False  # auto_now / auto_now_add / an AutoField: Django fills it
    choices: tuple[str, ...] = ()


@dataclass
class Model:
    """A concrete model: its module, class, table and fields."""

    module: str
    name: str
    table: str
    fields: list[Field]

    def column(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name or f.column == name), None)

    @property
    def primary(self) -> str:
        return next((f.column for f in self.fields if f.primary), "id")


def read_models(project: Project, prefix: str = "") -> tuple[list[Model], dict[str, dict[str, str]]]:
    """Every concrete model of the project, and every choices class (name -> {member: value})."""
    enums: dict[str, dict[str, str]] = {}
    classes: dict[str, tuple[str, ast.ClassDef]] = {}
    for module, tree in project.modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and base_names(node) & CHOICES_BASES:
                enums[node.name] = _choice_values(node)
        if _is_models_module(module):
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and not base_names(node) & CHOICES_BASES:
                    classes[node.name] = (module, node)
    labels = _app_labels(project)
    models = []
    for name, (module, node) in classes.items():
        fields = _fields(node, classes, enums, tree_lists(project, module))
        if not fields or meta_value(node, "abstract") is True:
            continue
        package = module.rsplit(".models", 1)[0].removeprefix(prefix)
        label = labels.get(package, package.rsplit(".", 1)[-1])
        table = meta_value(node, "db_table")
        models.append(Model(module.removeprefix(prefix), name, table if isinstance(table, str) else
                            f"{label}_{name.lower()}", fields))
    return models, enums


def _is_models_module(module: str) -> bool:
    return module.endswith(".models") or ".models." in module or module == "models"


def base_names(node: ast.ClassDef) -> set[str]:
    """The last names of a class's bases (``generics.CreateAPIView`` -> ``CreateAPIView``)."""
    return {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}


def _choice_values(node: ast.ClassDef) -> dict[str, str]:
    members = {}
    for item in node.body:
        if isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name):
            value = item.value.elts[0] if isinstance(item.value, ast.Tuple) and item.value.elts else item.value
            if isinstance(value, ast.Constant) and isinstance(value.value, (str, int)):
                members[item.targets[0].id] = str(value.value)
    return members


def tree_lists(project: Project, module: str) -> dict[str, tuple[str, ...]]:
    """Module-level lists of choice pairs (``STATUS_CHOICES = [("queued", "Queued"), ...]``) in ``module``."""
    found: dict[str, tuple[str, ...]] = {}
    for name, tree in project.modules:
        if name != module:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                pairs = _pairs(node.value)
                if pairs:
                    found[node.targets[0].id] = pairs
    return found


def _pairs(node: ast.expr) -> tuple[str, ...]:
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return ()
    values = [e.elts[0].value for e in node.elts if isinstance(e, (ast.Tuple, ast.List)) and e.elts
              and isinstance(e.elts[0], ast.Constant)]
    return tuple(str(v) for v in values) if len(values) == len(node.elts) else ()


def meta_value(node: ast.ClassDef, key: str) -> object:
    """The literal ``key`` of a class's ``class Meta`` (``db_table``, ``fields``); None where it is none."""
    for item in node.body:
        if isinstance(item, ast.ClassDef) and item.name == "Meta":
            for assign in item.body:
                if isinstance(assign, ast.Assign) and getattr(assign.targets[0], "id", None) == key:
                    try:
                        return ast.literal_eval(assign.value)
                    except ValueError:
                        return None
    return None


def _fields(node: ast.ClassDef, classes: dict, enums: dict, lists: dict) -> list[Field]:
    """The class's fields, after those of the project's own base classes (abstract models)."""
    inherited: list[Field] = []
    for base in base_names(node):
        if base in classes and base != node.name:
            inherited += _fields(classes[base][1], classes, enums, lists)
    own = [f for item in node.body if (f := _field(item, enums, lists)) is not None]
    names = {f.name for f in own}
    return [f for f in inherited if f.name not in names] + own


def _field(item: ast.stmt, enums: dict, lists: dict) -> Field | None:
    if not (isinstance(item, ast.Assign) and isinstance(item.targets[0], ast.Name) and isinstance(item.value, ast.Call)):
        return None
    call = item.value
    kind = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if not (kind.endswith("Field") or kind in RELATIONS) or kind in NO_COLUMN:
        return None
    name = item.targets[0].id
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    column = _constant(keywords.get("db_column")) or (f"{name}_id" if kind in RELATIONS else name)
    auto = kind in AUTO or any(_constant(keywords.get(k)) is True for k in ("auto_now", "auto_now_add"))
    return Field(name=name, column=str(column), kind=kind, primary=_constant(keywords.get("primary_key")) is True,
                 null=_constant(keywords.get("null")) is True, default=keywords.get("default"), auto=auto,
                 choices=_choices_of(keywords.get("choices"), enums, lists))


def _choices_of(node: ast.expr | None, enums: dict, lists: dict) -> tuple[str, ...]:
    if node is None:
        return ()
    if isinstance(node, ast.Attribute) and node.attr == "choices":  # Status.choices, Model.Status.choices
        inner = node.value
        members = enums.get(inner.attr if isinstance(inner, ast.Attribute) else getattr(inner, "id", ""), {})
        return tuple(members.values())
    if isinstance(node, ast.Name):
        return lists.get(node.id, ())
    return _pairs(node)


def _constant(node: ast.expr | None) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _app_labels(project: Project) -> dict[str, str]:
    """App package -> its label, where an ``AppConfig`` in ``<package>.apps`` sets one."""
    labels = {}
    for module, tree in project.modules:
        if not module.endswith("apps"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and "AppConfig" in base_names(node):
                attrs = {a.targets[0].id: _constant(a.value) for a in node.body if isinstance(a, ast.Assign)
                         and isinstance(a.targets[0], ast.Name)}
                name = attrs.get("name")
                if isinstance(name, str):
                    labels[name] = str(attrs.get("label") or name.rsplit(".", 1)[-1])
    return labels
