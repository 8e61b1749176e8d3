"""Which Django model is the job table, which of its states are final, and a row its sweep picks up.

The job model has a status / state field, best with choices, and the
columns of a job's life (attempts, heartbeat, reason). Final states come
from a constant naming them (``FINAL_STATUSES = (Review.Status.DONE, ...)``)
or, failing that, from the choices' values by their words ("failed",
"needs_lawyer" and past participles are final; "queued", "-ing" words are
not); a value that fits neither leaves the guess to a TODO.
"""
from __future__ import annotations

import ast
import json

from harness.scaffold.django_models import TIMESTAMPS, Field, Model

STATE_WORDS = ("status", "state")
LIFE_WORDS = ("attempt", "tries", "retries", "heartbeat", "reason", "error")
FINAL_NAMES = ("TERMINAL", "FINAL", "DONE_STATES", "END_STATES", "FINISHED")
NOT_FINAL = {"new", "queued", "pending", "created", "submitted", "received", "scheduled", "started", "waiting",
             "accepted", "uploaded", "claimed", "assigned", "requested", "active", "open", "retry", "enqueued",
             "ready", "draft", "todo", "paused"}
FINAL = {"done", "failed", "error", "errored", "completed", "complete", "succeeded", "success", "finished",
         "cancelled", "canceled", "rejected", "expired", "aborted", "dead", "skipped", "timeout", "timed_out",
         "sent", "delivered", "paid", "closed", "resolved", "archived"}


def job_model(models: list[Model], task_text: str) -> tuple[Model, Field] | None:
    """The model most like a job table (and its state field), or None."""
    best, best_score = None, 0
    for model in models:
        state = next((f for f in model.fields if f.name.lower() in STATE_WORDS or f.name.lower().endswith(
            ("_status", "_state"))), None)
        if state is None:
            continue
        score = 1 + 2 * bool(state.choices) + 2 * (model.name in task_text)
        score += sum(any(w in f.name.lower() for f in model.fields) for w in LIFE_WORDS)
        if score > best_score:
            best, best_score = (model, state), score
    return best


def final_states(state: Field, project_trees: list[tuple[str, ast.Module]], enums: dict) -> tuple[tuple[str, ...], str]:
    """The final states and where they came from; empty when no guess holds."""
    named = _named_constant(project_trees, enums, state.choices)
    if named:
        return named
    final = tuple(v for v in state.choices if _is_final(v))
    unsure = [v for v in state.choices if v not in final and not _is_not_final(v)]
    if final and not unsure:
        return final, f"guessed from the choices of {state.name} by their words"
    return (), ""


def _named_constant(trees: list[tuple[str, ast.Module]], enums: dict, values: tuple[str, ...]) -> tuple[tuple[str, ...], str] | None:
    for module, tree in trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                    and any(word in node.targets[0].id.upper() for word in FINAL_NAMES)):
                continue
            states = _members(node.value, enums)
            if states and (not values or set(states) <= set(values)):
                return tuple(states), f"the constant {node.targets[0].id} in {module}"
    return None


def _members(node: ast.expr, enums: dict) -> list[str]:
    """``(Status.DONE, "failed", Review.Status.X)`` as values, or [] when one cannot be read."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) and not (
            isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set", "tuple") and node.args):
        return []
    elts = node.elts if not isinstance(node, ast.Call) else getattr(node.args[0], "elts", [])
    out = []
    for elt in elts:
        if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
            out.append(elt.value)
        elif isinstance(elt, ast.Attribute) and isinstance(elt.value, (ast.Name, ast.Attribute)):
            enum = elt.value.attr if isinstance(elt.value, ast.Attribute) else elt.value.id
            value = enums.get(enum, {}).get(elt.attr)
            if value is None:
                return []
            out.append(value)
        else:
            return []
    return out


def _is_final(value: str) -> bool:
    v = value.lower()
    return v in FINAL or v.startswith(("needs", "failed", "done")) or (v.endswith("ed") and v not in NOT_FINAL)


def _is_not_final(value: str) -> bool:
    v = value.lower()
    return v in NOT_FINAL or v.endswith("ing") or v.startswith(("in_", "awaiting"))


def required_row(model: Model, picked: dict[str, str]) -> str:
    """A Python dict literal naming every column the table requires (``NOT NULL``, no database default),
    with ``picked`` (column -> Python expression) on top: the row a harness insert needs."""
    items = {}
    for f in model.fields:
        if f.primary or f.null:
            continue
        items[f.column] = _sample(f)
    items.update(picked)
    # a value may end in a comment (its own comma before it)
    lines = [f"    {json.dumps(column)}: {value}" + ("" if "#" in value else ",") for column, value in items.items()]
    why = ["    # every column the table requires: Django keeps defaults in Python, the database has none"]
    if picked:
        why.append(f"    # {', '.join(picked)}: as the sweep's query selects them")
    return "{\n" + "\n".join(why + lines) + "\n}" if lines else "{}"


def _sample(f: Field) -> str:
    if f.kind in TIMESTAMPS or f.auto:
        return "LONG_AGO"
    if f.choices:
        return json.dumps(f.choices[0])
    default = f.default
    if isinstance(default, ast.Constant) and default.value is not None:
        return json.dumps(default.value)
    if isinstance(default, ast.Name) and default.id in ("list", "dict"):
        return json.dumps("[]" if default.id == "list" else "{}")  # a JSON column's text
    if f.kind in ("IntegerField", "PositiveIntegerField", "BigIntegerField", "SmallIntegerField",
                  "PositiveSmallIntegerField", "FloatField", "DecimalField", "DurationField"):
        return "0"
    if f.kind == "BooleanField":
        return "False"
    if f.kind == "JSONField":
        return json.dumps("{}")
    if f.kind in ("ForeignKey", "OneToOneField"):
        return f"None,  # TODO(jobquake init): the id of an existing row {f.name} refers to"
    return json.dumps(f"{f.name} 1")
