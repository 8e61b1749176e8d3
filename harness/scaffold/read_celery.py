"""Reader: how the code configures Celery (settings, beat schedule, retries).

Settings come from ``Celery(...)`` keywords, ``app.conf.update(...)``
(keywords or a dict), ``app.conf.x = ...`` and the module named by
``config_from_object("module")`` (its lowercase names). Each keeps its
literal value, or None where the code computes it (from an environment
variable, say: ``[tool.jobquake.env]`` scales those); a dict keeps its
literal values and None for the computed ones. The beat schedule's
entries (``beat_schedule`` and named ``add_periodic_task`` calls) keep
their interval in seconds (a number, ``timedelta``, a ``crontab`` every N
minutes). A task that calls ``self.retry`` or declares ``autoretry_for``
retries.
"""
from __future__ import annotations

import ast

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project
from harness.scaffold.syntax import call_name, keywords, literal, seconds

APP_KEYWORDS = {"broker", "backend"}  # Celery(...) keywords that are not settings names


def read(project: Project, found: Findings) -> None:
    config_modules: set[str] = set()
    for module, tree in project.modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                _call(node, found, config_modules)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                _conf_assignment(node.targets[0], node.value, found)
    for module, tree in project.modules:
        if module in config_modules or module.endswith("celeryconfig"):
            _config_module(tree, found)
    found.retries = found.retries or any(
        "autoretry_for" in t.options or "retry_backoff" in t.options for t in found.tasks)


def _setting(found: Findings, key: str, value: ast.expr) -> None:
    if isinstance(value, ast.Dict) and literal(value) is None:  # some values computed: keep the literal ones
        found.celery_conf[key] = {literal(k): literal(v) for k, v in zip(value.keys, value.values)
                                  if isinstance(literal(k), str)}
    else:
        found.celery_conf[key] = literal(value)
    if key == "beat_schedule":
        _beat(value, found)


def _call(node: ast.Call, found: Findings, config_modules: set[str]) -> None:
    name = call_name(node)
    func = node.func
    if name == "Celery":
        for key, value in keywords(node).items():
            if key not in APP_KEYWORDS:
                _setting(found, key, value)
        return
    if name == "update" and isinstance(func, ast.Attribute) and _is_conf(func.value):
        for key, value in keywords(node).items():
            _setting(found, key, value)
        if node.args and isinstance(node.args[0], ast.Dict):
            for key_node, value in zip(node.args[0].keys, node.args[0].values):
                if isinstance(literal(key_node), str):
                    _setting(found, literal(key_node), value)  # type: ignore[arg-type]
    elif name == "config_from_object" and node.args and isinstance(literal(node.args[0]), str):
        config_modules.add(str(literal(node.args[0])))
    elif name == "add_periodic_task" and node.args:
        entry = literal(keywords(node).get("name"))
        if isinstance(entry, str):
            found.beat_entries[entry] = seconds(node.args[0])
    elif name == "retry" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "self":
        found.retries = True


def _is_conf(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "conf"


def _conf_assignment(target: ast.expr, value: ast.expr, found: Findings) -> None:
    if isinstance(target, ast.Attribute) and _is_conf(target.value):
        _setting(found, target.attr, value)


def _config_module(tree: ast.Module, found: Findings) -> None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.islower():
            _setting(found, node.targets[0].id, node.value)


def _beat(value: ast.expr, found: Findings) -> None:
    if not isinstance(value, ast.Dict):
        return
    for key, entry in zip(value.keys, value.values):
        name = literal(key)
        if not isinstance(name, str) or not isinstance(entry, (ast.Dict, ast.Call)):
            continue
        fields = dict(zip((literal(k) for k in entry.keys), entry.values)) if isinstance(entry, ast.Dict) \
            else keywords(entry)
        found.beat_entries[name] = seconds(fields.get("schedule"))
