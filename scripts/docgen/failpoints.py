"""docs/reference/failpoints.md: the framework failpoints, the actions, and refapp's own failpoints.

From ``harness.instrument.FAILPOINTS`` (every instrumented process offers
them), ``harness.failpoints.spec.ACTIONS`` (each action's parameters) and
``refapp/failpoints.py`` (its names and the comments beside them).
"""
from __future__ import annotations

import re
from pathlib import Path

from docgen import text

ROOT = Path(__file__).resolve().parents[2]

INTRO = """
A failpoint is a named seam in the app's code: `failpoint("submit.after_job_write", job_id=...)`
does nothing until a scenario arms it, then runs the armed action there. Every instrumented
process offers the framework failpoints below without any change to the app; an app marks finer
points itself with `from harness.failpoints import failpoint`. A scenario arms one with
`jq.faults.failpoint(at, action, ...)` (recorded, healed before the verdict) or
`jq.faults.exhaust_pool(at, ...)`; `jq.failpoints.arm(...)` is the same arming as a control
(not recorded, not healed). Every firing is recorded in the history.
"""

# what each action does when the failpoint fires (a test holds that every action has a line here)
ACTION_TEXT = {
    "raise": "raise `exception` (a dotted name, e.g. `sqlalchemy.exc.OperationalError`) with `message`",
    "sleep": "sleep `seconds` (real seconds, not scaled)",
    "hang": "block until the fault is healed (or the arming released), at most `timeout` seconds",
    "kill": "SIGKILL the process (its whole process group with `group=True`)",
    "exhaust_pool": "check out every connection of the pool lent as `resource` and hold them until healed",
    "callback": "call the function the app registered as `callback`, with the context and `kwargs`",
    "return": "make `failpoint()` return `value` to the app",
}


def _actions() -> list[str]:
    from harness.failpoints.spec import ACTIONS, RELEASABLE

    rows = []
    for action, params in ACTIONS.items():
        shown = ", ".join(f"`{name}`" + ("" if required else " (optional)")
                          for name, (_types, required) in params.items())
        held = "yes" if action in RELEASABLE else ""
        rows.append((f"`{action}`", ACTION_TEXT.get(action, "(not described)"), shown, held))
    return text.table(("action", "what it does", "parameters", "held until healed"), rows)


def _framework() -> list[str]:
    from harness.instrument import FAILPOINTS

    return text.table(("name", "fires"), [(f"`{name}`", where) for name, where in FAILPOINTS.items()])


def refapp_failpoints() -> list[tuple[str, str]]:
    """(name, what the comment beside or above it says) for each failpoint refapp marks."""
    found, pending = [], []
    for line in (ROOT / "refapp" / "failpoints.py").read_text(encoding="utf-8").splitlines():
        match = re.match(r'^[A-Z_]+ = "([\w.]+)"\s*(?:#\s*(.*))?$', line)
        if match:
            found.append((match.group(1), match.group(2) or " ".join(pending)))
            pending = []
        elif line.startswith("# --") or not line.strip():
            pending = []
        elif line.startswith("#"):
            pending.append(line.lstrip("# ").strip())
    return found


def _arming() -> list[str]:
    from harness.failpoints.control import FailpointControl

    arm = FailpointControl.arm
    return ["## Arming", "", f"`jq.failpoints.arm{text.signature(arm)}`", "", text.doc(arm), "",
            "`jq.faults.failpoint(at, action, ...)` takes the same conditions and parameters.", ""]


def _registering() -> list[str]:
    import harness.failpoints as fp

    lines = ["## What the app lends to actions", ""]
    for fn in (fp.register_resource, fp.register_callback, fp.register_exception_factory):
        lines += [f"### `{fn.__name__}{text.signature(fn)}`", "", text.doc(fn), ""]
    return lines


def render() -> str:
    body = ["## Framework failpoints", "",
            "Offered by every process the instrumentation loads into. Their context has `process` (the "
            "stack's name for the process: `api`, `worker1`...) and, inside a Celery task, `job_id`, "
            "`attempt`, `task` and `task_id`; `match={\"process\": \"api\"}` picks one process.", "",
            *_framework(), "", "## Actions", "", *_actions(), "", *_arming(), *_registering(),
            "## refapp's failpoints", "",
            "The reference app marks these seams itself (`refapp/failpoints.py`; scenarios import the "
            "names from there).", "",
            *text.table(("name", "where"), [(f"`{n}`", where) for n, where in refapp_failpoints()])]
    return text.page("Failpoints reference", INTRO, body)
