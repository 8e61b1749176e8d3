"""scripts/verdict_path.py counts a module's entries from the verdict's code, and calls up the layers."""
from __future__ import annotations

import importlib.util
import sys

from tests.common.imports import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("verdict_path", ROOT / "scripts" / "verdict_path.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _function(module: str, source: str, **names):
    """A function whose frames say they run in ``module`` (its globals' ``__name__``)."""
    scope = {"__name__": module, **names}
    exec(source, scope)  # noqa: S102 - test code of its own
    return scope["f"]


def test_entries_from_the_verdict_and_climbs_up_are_counted_and_nothing_else():
    trace = _script().PathTrace()
    run_settle = _function("harness.run", "def f():\n    return 1\n")
    history_record = _function("harness.history.record", "def f():\n    return 2\n")
    # a fault calling the run (layer 6 -> 7) climbs; the run calling the history goes down
    fault_heal = _function("harness.faults.fault_set", "def f():\n    return run_settle() + down()\n",
                           run_settle=run_settle, down=history_record)
    own_helper = _function("harness.verdict", "def f():\n    return 0\n")
    judge = _function("harness.verdict", "def f():\n    return run_settle() + fault_heal() + own() + run_settle()\n",
                      run_settle=run_settle, fault_heal=fault_heal, own=own_helper)
    sys.setprofile(trace.profile)
    try:
        judge()
    finally:
        sys.setprofile(None)
    assert trace.entries == {"harness.run": 2, "harness.faults.fault_set": 1}  # the verdict's own helper: no entry
    assert trace.climbs == {("harness.faults.fault_set", "harness.run.f"): 1}
