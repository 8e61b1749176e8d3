"""Invariant: the app's limits nest, each inside the next (a static audit, no fault needed).

A per-call deadline longer than the task's soft limit means the soft limit,
not the call's deadline, ends a hung call — mid-write, with the wrong label.
A hard limit longer than the broker's visibility timeout hands a healthy
task to a second worker. A queue that dead-letters after as many receives
as the code allows attempts means the code's "give up" branch never runs.
Each of these is a pair of numbers in the wrong order, invisible until the
slow day comes.

The app declares its limits through config ``limits`` (see
``harness.limits``): chains of named limits, innermost first, each of
which must be strictly increasing::

    {"chains": {"celery": [["model_call", 1.0], ["task_soft", 6.0], ["task_hard", 9.0],
                           ["broker_visibility", 9.6]],
                "sqs attempts": [["code_attempts", 3], ["queue_max_receives", 4]]}}

``None`` is "no limit": an unlimited layer inside a limited one is
invalid (nothing bounds it where the outer one expects it to be bounded);
an unlimited outermost layer is allowed. Without a declaration the verdict
is ``unknown``.
"""
from __future__ import annotations

from typing import Any

from harness.checks.end_to_end import declared_limits
from harness.checks.needs import Missing, Need
from harness.checks.result import Result, invalid_result, unknown_result, valid_result
from harness.checks.runner import invariant
from harness.evidence import Snapshot
from harness.history.history import History

NAME = "limits_nest"
CHAINS = "chains"


def _chains_declared(history: History, snapshot: Snapshot | None) -> Missing | None:
    if declared_limits(history).get(CHAINS):
        return None
    return Missing("the app declared no chains of limits (config limits)")


LIMIT_CHAINS = Need("limit_chains", "the app's declared chains of nested limits", _chains_declared)


def _out_of_order(chain: str, layers: list[Any]) -> list[dict[str, Any]]:
    """Each adjacent pair of one chain that does not nest."""
    found = []
    for (inner, a), (outer, b) in zip(layers, layers[1:]):
        if a is None and b is not None:
            why = f"{inner} is unlimited inside {outer} = {b:g}"
        elif a is not None and b is not None and not float(a) < float(b):
            why = f"{inner} = {a:g} is not below {outer} = {b:g}"
        else:
            continue
        found.append({"chain": chain, "inner": inner, "inner_value": a, "outer": outer, "outer_value": b,
                      "why": why})
    return found


@invariant(NAME, needs=(LIMIT_CHAINS,))
def limits_nest(history: History, snapshot: Snapshot | None) -> Result:
    """Every declared chain of limits is strictly increasing from the innermost out."""
    chains = declared_limits(history).get(CHAINS) or {}
    violations = []
    for chain, layers in chains.items():
        violations += _out_of_order(str(chain), [tuple(layer) for layer in layers])
    if violations:
        f = violations[0]
        return invalid_result(NAME, f"{len(violations)} limit(s) do not nest; first, in {f['chain']}: {f['why']}",
                              violations, chains=chains)
    if not chains:
        return unknown_result(NAME, "no chain of limits declared")
    return valid_result(NAME, f"{len(chains)} chain(s) of limits nest: " + "; ".join(
        " < ".join(f"{name} {'∞' if value is None else format(float(value), 'g')}" for name, value in layers)
        for layers in chains.values()), chains=chains)
