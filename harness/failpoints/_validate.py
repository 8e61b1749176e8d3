"""Arm-time checks on the harness side: a bad arming fails in the test, not in the app."""
from __future__ import annotations

import json
from typing import Any

from harness.errors import FaultError
from harness.failpoints import _exceptions
from harness.failpoints.spec import ACTIONS


def validated(name: str, action: str, *, once: bool, times: int | None, probability: float | None,
              seed: int, match: dict[str, Any] | None, params: dict[str, Any]) -> dict[str, Any]:
    """The spec fields for ``armed.json`` (without ``arm``/``released``); FaultError naming the problem."""

    def fail(why: str) -> FaultError:
        return FaultError(why, fault=f"failpoint {name}")

    if not isinstance(name, str) or not name:
        raise FaultError("a failpoint name must be a non-empty string", fault=f"failpoint {name!r}")
    if action not in ACTIONS:
        raise fail(f"unknown action {action!r}; known actions: {', '.join(sorted(ACTIONS))}")
    _check_params(action, params, fail)
    if once and times is not None:
        raise fail("give either once=True or times=n, not both")
    if once:
        times = 1
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 1):
        raise fail(f"times must be a positive int, got {times!r}")
    if probability is not None and (isinstance(probability, bool)
                                    or not isinstance(probability, (int, float))
                                    or not 0.0 <= probability <= 1.0):
        raise fail(f"probability must be a number between 0 and 1, got {probability!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise fail(f"seed must be an int, got {seed!r}")
    if match is not None and not isinstance(match, dict):
        raise fail(f"match must be a dict of context values, got {type(match).__name__}")
    try:
        json.dumps(params)
    except (TypeError, ValueError) as exc:
        raise fail(f"params must be JSON values: {exc}") from None
    return {
        "action": action, "params": params, "times": times,
        "probability": None if probability is None else float(probability), "seed": seed,
        "match": None if match is None else {str(k): str(v) for k, v in match.items()},
    }


def _check_params(action: str, params: dict[str, Any], fail: Any) -> None:
    schema = ACTIONS[action]
    unknown = sorted(set(params) - set(schema))
    if unknown:
        raise fail(f"action {action!r} takes no parameter {', '.join(unknown)}; "
                   f"it takes: {', '.join(sorted(schema)) or 'none'}")
    for param, (types, required) in schema.items():
        if param not in params:
            if required:
                raise fail(f"action {action!r} needs {param}=")
            continue
        value = params[param]
        bad_type = object not in types and (not isinstance(value, types)
                                            or (isinstance(value, bool) and bool not in types))
        if bad_type:
            expected = " or ".join(t.__name__ for t in types)
            raise fail(f"{param} must be {expected}, got {value!r}")
        if param in ("seconds", "timeout") and value < 0:
            raise fail(f"{param} must not be negative, got {value!r}")
    if action == "raise":
        _check_exception(params["exception"], fail)


def _check_exception(dotted: str, fail: Any) -> None:
    """Resolve the exception here when its package is installed here too; else trust the app."""
    try:
        _exceptions.resolve(dotted)
    except ModuleNotFoundError as exc:
        if exc.name != dotted.split(".")[0]:
            raise fail(f"exception {dotted!r} cannot be imported: {exc}") from None
    except (LookupError, TypeError) as exc:
        raise fail(f"exception {dotted!r} is not usable: {exc}") from None
    except ImportError as exc:
        raise fail(f"exception {dotted!r} cannot be imported: {exc}") from None
