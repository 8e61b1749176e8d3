"""The failpoint channel is the run's own: another user can neither arm a failpoint nor forge a trigger."""
from __future__ import annotations

import json
from harness.failpoints.control import FailpointControl

ATTACK = """
import json, os, sys
folder = sys.argv[1]
results = {}
for name, mode in (("armed.json", "w"), ("triggers.jsonl", "a"), ("state", "r+b")):
    try:
        with open(os.path.join(folder, name), mode) as fh:
            fh.write('{"failpoints": {}}' if "b" not in mode else b"x")
        results[name] = "written"
    except OSError as exc:
        results[name] = type(exc).__name__
try:
    open(os.path.join(folder, "counters", "1"), "w").close()
    results["counters"] = "written"
except OSError as exc:
    results["counters"] = type(exc).__name__
print(json.dumps(results))
"""


def test_another_user_cannot_arm_a_failpoint_or_forge_a_trigger(attacker, shared_tmp):
    # even in a folder everyone can enter (as /tmp), the channel itself keeps them out
    control = FailpointControl.create(shared_tmp / "failpoints")
    armed = control.arm("submit.after_job_write", "return", value=1)
    tried = attacker.run(["/usr/bin/python3", "-I", "-c", ATTACK, str(control.path)])
    assert tried.returncode == 0, tried.stderr
    results = json.loads(tried.stdout)
    assert set(results.values()) == {"PermissionError"}, results
    assert control.triggers() == []
    assert list(control.armed()) == ["submit.after_job_write"] and armed.triggers() == []

