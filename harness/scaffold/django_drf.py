"""A Django REST framework view that takes a new job, read from the source: the scenarios call it.

A view class (``CreateAPIView``, ``ListCreateAPIView``, ``GenericAPIView``,
a ``ModelViewSet``...) whose ``serializer_class`` is a ``ModelSerializer``
of the job model, and which queues the job's task (``delay``,
``apply_async``, ``on_commit``...) in ``create`` / ``perform_create``, is
where a new job comes in. init then writes an adapter that calls that view
with a request built by DRF's ``APIRequestFactory``: the job goes through the
app's own validation, save and enqueue. The new job's id is read from the
response: the key of the view's own ``Response({...})`` that holds the saved
object's id, else the serializer's primary key field (``id``).
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from string import Template

from harness.scaffold import django_templates
from harness.scaffold.django_models import Model, base_names, meta_value
from harness.scaffold.findings import Adapter
from harness.scaffold.project import Project

CREATE_VIEWS = {"CreateAPIView", "ListCreateAPIView", "GenericAPIView", "ModelViewSet", "GenericViewSet",
                "CreateModelMixin"}
VIEWSETS = {"ModelViewSet", "GenericViewSet", "ViewSet"}  # routed by action: as_view({"post": "create"})
QUEUES = {"delay", "apply_async", "send_task", "on_commit", "delay_on_commit", "apply_async_on_commit"}
TEXT_FIELDS = {"CharField", "TextField", "SlugField"}


@dataclass
class View:
    """The view that takes a new job, and what the adapter needs to call it."""

    module: str
    name: str
    serializer: str
    viewset: bool
    path: str  # the route it is served at, "/" where none was found
    id_key: str | None  # the response's key holding the new job's id; None where it was not found
    fields: list[tuple[str, str]] = field(default_factory=list)  # writable (name, field class)
    body: ast.ClassDef | None = field(default=None, repr=False, compare=False)


def find(project: Project, model: Model, prefix: str) -> View | None:
    """The first view of the project that saves ``model`` through its serializer and queues it."""
    classes = {node.name: (module, node) for module, tree in project.modules for node in ast.walk(tree)
               if isinstance(node, ast.ClassDef)}
    serializers = {name: node for name, (_, node) in classes.items() if _serializes(node, model)}
    for name, (module, node) in classes.items():
        serializer = _class_attribute(node, "serializer_class")
        if serializer not in serializers or not base_names(node) & CREATE_VIEWS or not _queues(node):
            continue
        viewset = bool(base_names(node) & VIEWSETS)
        writable = _writable(serializers[serializer], model)
        return View(module.removeprefix(prefix), name, serializer, viewset, _route(project, name, viewset),
                    _id_key(node, serializers[serializer], model), writable, node)
    return None


def _serializes(node: ast.ClassDef, model: Model) -> bool:
    meta = next((n for n in node.body if isinstance(n, ast.ClassDef) and n.name == "Meta"), None)
    target = _class_attribute(meta, "model") if meta is not None else None
    return target is not None and target.rsplit(".", 1)[-1] == model.name and "Serializer" in " ".join(base_names(node))


def _class_attribute(node: ast.ClassDef | None, name: str) -> str | None:
    """``name = X`` in a class body: the dotted text of ``X``."""
    for item in node.body if node is not None else []:
        if isinstance(item, ast.Assign) and any(getattr(t, "id", None) == name for t in item.targets):
            return ast.unparse(item.value)
    return None


def _methods(node: ast.ClassDef, *names: str) -> list[ast.FunctionDef]:
    return [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name in names]


def _queues(node: ast.ClassDef) -> bool:
    return any(isinstance(c, ast.Call) and getattr(c.func, "attr", None) in QUEUES
               for method in _methods(node, "create", "perform_create", "post") for c in ast.walk(method))


def _writable(serializer: ast.ClassDef, model: Model) -> list[tuple[str, str]]:
    """The fields a client may write: the serializer's ``fields`` less the read-only ones and those Django
    fills; with ``"__all__"`` (or ``exclude``), the model's fields a new row needs."""
    listed, read_only = meta_value(serializer, "fields"), meta_value(serializer, "read_only_fields") or ()
    by_name = {f.name: f for f in model.fields}
    if isinstance(listed, (list, tuple)):
        names = [n for n in listed if n not in read_only]
    else:
        names = [f.name for f in model.fields if f.default is None and not f.null]
    return [(n, by_name[n].kind) for n in names if n in by_name and not by_name[n].primary and not by_name[n].auto]


def _id_key(view: ast.ClassDef, serializer: ast.ClassDef, model: Model) -> str | None:
    """The key of the view's ``Response({...})`` whose value is the saved object's id; else the serializer's
    primary key field, where the response is the serializer's data (DRF's own ``create``)."""
    for method in _methods(view, "create", "post"):
        for call in (c for c in ast.walk(method) if isinstance(c, ast.Call) and ast.unparse(c.func) == "Response"):
            body = call.args[0] if call.args else None
            if isinstance(body, ast.Dict):
                return next((str(k.value) for k, v in zip(body.keys, body.values) if isinstance(k, ast.Constant)
                             and ast.unparse(v).rstrip(")").endswith((".id", ".pk", f".{model.primary}"))), None)
            if body is None or not ast.unparse(body).endswith(".data"):
                return None
    listed = meta_value(serializer, "fields")
    pk = next((f.name for f in model.fields if f.primary), "id")
    return pk if listed == "__all__" or (isinstance(listed, (list, tuple)) and pk in listed) else None


def _route(project: Project, view: str, viewset: bool) -> str:
    """The path ``path("jobs/", View.as_view())`` or ``router.register("jobs", ViewSet)`` gives the view."""
    for _, tree in project.modules:
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and len(n.args) >= 2):
            first, second = call.args[0], ast.unparse(call.args[1])
            named = second.startswith(f"{view}.as_view") or (viewset and second == view)
            if named and isinstance(first, ast.Constant) and isinstance(first.value, str):
                return "/" + first.value.strip("^$").lstrip("/")
    return "/"


def sample(name: str, kind: str, choices: tuple[str, ...] = ()) -> str:
    """A placeholder value of job number ``n`` for a serializer field, as Python text."""
    if choices:
        return repr(choices[0])
    if kind in TEXT_FIELDS:
        return f'f"{name} {{n}}"'
    if kind == "EmailField":
        return 'f"user{n}@example.com"'
    if kind in ("IntegerField", "PositiveIntegerField", "BigIntegerField", "SmallIntegerField"):
        return "n"
    if kind in ("FloatField", "DecimalField"):
        return "float(n)"
    if kind == "BooleanField":
        return "False"
    if kind == "JSONField":
        return "{}"
    return "None"


def adapter(view: View, model: Model, todo: str, atomic_requests: bool = False) -> Adapter:
    """The adapter that calls ``view``, the arguments of job number ``n``, and the TODOs it leaves; with
    ``ATOMIC_REQUESTS``, inside a transaction, as Django's handler calls it (``as_view()`` alone does not)."""
    where = f"{view.module}.{view.name}"
    actions = '{"post": "create"}' if view.viewset else ""
    call = f"response = {view.name}.as_view({actions})(request)"
    imports = "from rest_framework.test import APIRequestFactory\n"
    if atomic_requests:
        imports = "from django.db import transaction\n" + imports
        call = ("with transaction.atomic():  # ATOMIC_REQUESTS: Django's handler runs each view in a transaction"
                f"\n        {call}")
    text = Template(django_templates.DRF_ADAPTER).substitute(
        TODO=todo, CALL=call, IMPORTS=imports, VIEW=where, SERIALIZER=view.serializer, MODULE=view.module, NAME=view.name,
        PATH=json.dumps(view.path),
        PATH_WHY="the view's route (its URLconf)" if view.path != "/" else "no route names the view: any path works",
        ID_KEY=json.dumps(view.id_key) if view.id_key else "None",
        ID_WHY=(f"found: the key of the new job's id in {view.name}'s response" if view.id_key else
                f"{todo}: the key of the new job's id in {view.name}'s response"))
    choices = {f.name: f.choices for f in model.fields}
    args = [f"{name!r}: {sample(name, kind, choices.get(name, ()))},  # {todo}: a placeholder {view.serializer} "
            f"accepts" for name, kind in view.fields]
    todos = [f"scenarios/conftest.py job_args: placeholder values of {view.serializer}'s writable fields "
             f"({', '.join(n for n, _ in view.fields) or 'none found'})"]
    if view.id_key is None:
        todos.append(f"scenarios/submit_adapter.py ID_KEY: the key of the new job's id in {view.name}'s response")
    why = (f"found: {where} ({view.path}) saves a new job through {view.serializer} and queues it: the scenarios "
           f"call it through scenarios/submit_adapter.py")
    return Adapter(text, why, args, todos, view.body)
