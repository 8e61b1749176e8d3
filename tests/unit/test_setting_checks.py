"""config asks the layers above it to check their settings through harness.setting_checks."""
from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from harness import setting_checks
from harness.config import resolve
from harness.errors import ConfigError


@pytest.mark.parametrize("key", sorted(setting_checks.OWNERS))
def test_every_owner_registers_the_check_of_its_key(key):
    importlib.import_module(setting_checks.OWNERS[key])
    assert key in setting_checks._CHECKS


@pytest.mark.parametrize(("key", "bad"), [("call_key", "sum:{step}"), ("paidapi_prices", {"m": {"input": "x"}}),
                                          ("job_id_from", "args[first]")])
def test_a_value_the_owner_refuses_names_the_problem(key, bad):
    assert setting_checks.problem(key, bad)


def test_an_unowned_key_cannot_register():
    with pytest.raises(KeyError, match="OWNERS"):
        setting_checks.checks_setting("no_such_setting")


def test_config_checks_owned_values_without_its_caller_importing_the_owner():
    """A fresh interpreter that imports config only: the owner is loaded to check the value."""
    script = ("import json, sys; from harness.config import resolve\n"
              "try:\n    resolve(environ={'JOBQUAKE_JOB_ID_FROM': 'args[first]'}, pyproject=None)\n"
              "except Exception as exc:\n    print(json.dumps([type(exc).__name__, str(exc)]))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    kind, message = json.loads(proc.stdout)
    assert kind == "ConfigError" and "job_id_from" in message.lower()


def test_importing_config_loads_no_owner():
    script = "import sys, harness.config; print(sorted(m for m in sys.modules if m.startswith('harness.')))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    loaded = proc.stdout
    assert "harness.config" in loaded and "harness.paidapi" not in loaded and "harness.instrument" not in loaded


def test_a_good_call_key_resolves():
    assert resolve(cli={"call_key": "sum:{job_id}:{step}"}, environ={}, pyproject=None).call_key == "sum:{job_id}:{step}"
    with pytest.raises(ConfigError, match="call_key"):
        resolve(cli={"call_key": "sum:{step}"}, environ={}, pyproject=None)
