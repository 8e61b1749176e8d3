"""docs/reference/faults.md: every fault in the registry and every moment a fault can wait for.

From ``harness.faults.FAULTS`` (a new fault class is a new section) and the
classes of ``harness.faults.when``.
"""
from __future__ import annotations

import inspect

from docgen import text

INTRO = """
A scenario injects a fault through `jq.faults.<name>(...)`: the call builds the fault, injects it,
records it in the run's history and returns it. Every fault is healed before the verdict (the
heal is idempotent), and `faults_landed` asks the app's own evidence whether it took effect
(see [Evidence and `unknown`](../explanation/evidence.md)). The first argument names what the
fault acts on; how and when come after it, as keywords. The same faults are built by name for
config files and replays: `make_fault("kill_worker", when=...)`, `from_spec(fault.spec())`.

How to use each in a scenario: [Faults, one by one](../howto/faults.md).
"""

# the verbs every fault has, from the base class
VERBS = ("inject", "heal", "spec")


def _fault(name: str, cls: type) -> list[str]:
    return [f"## `{name}`", "",
            f"`jq.faults.{name}{text.signature(cls)}`: class `harness.faults.{cls.__name__}`", "",
            text.doc(cls), ""]


def _moments() -> list[str]:
    from harness.faults import when

    lines = ["## Moments (`when=`)", "",
             "`kill_worker` and `broker_outage` take a moment; the fault happens when it comes "
             "(`fault.wait()` returns what was seen then).", ""]
    for cls in (when.Now, when.InFlight, when.AtFailpoint, when.Queued):
        lines += [f"### `{cls.__name__}{text.signature(cls)}`", "", text.doc(cls), ""]
    return lines


def _verbs() -> list[str]:
    from harness.faults import FAULTS
    from harness.faults.base import Fault

    waiting = ", ".join(f"`{name}`" for name, cls in FAULTS.items() if hasattr(cls, "wait"))

    lines = ["## What every fault has", ""]
    for verb in VERBS:
        member = getattr(Fault, verb)
        lines.append(f"- `{verb}{text.signature(member)}`: {text.summary(member)}")
    lines += ["- `with fault:` injects it and heals it at the end of the block.",
              f"- `fault.wait(timeout=None)` ({waiting}): blocks until it took place and returns its "
              "evidence; `WaitTimeout` at the bound.", ""]
    return lines


def render() -> str:
    from harness.faults import FAULTS
    from harness.faults.registry import table

    body = [table(), ""]
    for name, cls in FAULTS.items():
        body += _fault(name, cls)
    body += _moments() + _verbs()
    return text.page("Faults reference", INTRO, body)
