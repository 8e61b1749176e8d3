"""The instrumentation folder is the run's own: another user can forge neither an event nor an attempt."""
from __future__ import annotations

import json
import os

import pytest

from harness._private_dir import UnsafeDirError
from harness.errors import ConfigError
from harness.instrument import _context, _events
from harness.instrument.control import InstrumentControl

ATTACK = """
import json, os, sys
folder = sys.argv[1]
counter = os.path.join(folder, "attempts", sys.argv[2])
results = {}
for name, path, mode in (("events", os.path.join(folder, "events.jsonl"), "a"),
                         ("counter", counter, "r+"),
                         ("new counter", os.path.join(folder, "attempts", "0" * 32), "w"),
                         ("new file", os.path.join(folder, "planted"), "w")):
    try:
        with open(path, mode) as fh:
            fh.write('{"t": 0, "type": "task", "name": "forged", "attempt": 1}\\n')
        results[name] = "written"
    except OSError as exc:
        results[name] = type(exc).__name__
print(json.dumps(results))
"""

PLANT = """
import os, sys
folder = sys.argv[1]
os.makedirs(folder, mode=0o777)
os.chmod(folder, 0o777)
with open(os.path.join(folder, "events.jsonl"), "w") as fh:
    fh.write('{"t": 0, "type": "task", "name": "forged"}\\n')
os.chmod(os.path.join(folder, "events.jsonl"), 0o666)
"""


def test_another_user_cannot_write_the_events_or_the_attempt_counters(attacker, shared_tmp):
    # even in a folder everyone can enter (as /tmp), the instrumentation folder keeps them out
    control = InstrumentControl.create(shared_tmp / "instrument")
    _events.record(str(control.path), "task", "start", job_id="j1", attempt=1)
    assert _context.next_attempt(str(control.path), "task", "j1", fallback=0) == 1
    (counter,) = os.listdir(control.path / "attempts")
    tried = attacker.run(["/usr/bin/python3", "-I", "-c", ATTACK, str(control.path), counter])
    assert tried.returncode == 0, tried.stderr
    results = json.loads(tried.stdout)
    assert set(results.values()) == {"PermissionError"}, results
    assert [r["name"] for r in control.records()] == ["start"]
    assert _context.next_attempt(str(control.path), "task", "j1", fallback=0) == 2


def test_a_folder_another_user_made_is_not_read(attacker, shared_tmp):
    planted = shared_tmp / "instrument"
    done = attacker.run(["/usr/bin/python3", "-I", "-c", PLANT, str(planted)])
    assert done.returncode == 0, done.stderr
    with pytest.raises(ConfigError, match=f"owned by uid {attacker.uid}, not by this user"):
        InstrumentControl(planted).records()
    with pytest.raises(UnsafeDirError, match=f"owned by uid {attacker.uid}"):
        InstrumentControl.create(planted)  # nor adopted
