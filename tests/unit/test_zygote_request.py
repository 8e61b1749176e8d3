"""Which commands the zygote forks, and which it leaves to a fresh interpreter."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.stack.zygote import request_for

CWD = Path("/srv/app")


def test_python_dash_m_is_forked_with_its_arguments_env_and_folder():
    request = request_for([sys.executable, "-m", "app.worker", "--queues", "a"], {"X": "1"}, CWD)
    assert request == {"env": {"X": "1"}, "cwd": "/srv/app", "argv": [sys.executable, "-m", "app.worker",
                                                                     "--queues", "a"],
                       "module": "app.worker", "args": ["--queues", "a"]}


def test_a_script_run_by_this_interpreter_is_found_from_the_processes_folder():
    request = request_for([sys.executable, "serve.py", "--port", "1"], {}, CWD)
    assert request is not None and request["script"] == "/srv/app/serve.py" and request["args"] == ["--port", "1"]


def test_interpreter_options_another_program_or_an_empty_command_are_not_forked():
    assert request_for([sys.executable, "-X", "dev", "-m", "app"], {}, CWD) is None
    assert request_for([sys.executable, "-c", "print(1)"], {}, CWD) is None
    assert request_for(["/usr/bin/python3.11", "-m", "app"], {}, CWD) is None
    assert request_for(["redis-server"], {}, CWD) is None
    assert request_for([], {}, CWD) is None


def test_a_console_script_is_forked_only_when_its_first_line_names_this_interpreter(tmp_path):
    ours, other = tmp_path / "ours", tmp_path / "other"
    ours.write_text(f"#!{sys.executable}\nprint(1)\n")
    other.write_text("#!/usr/bin/python3\nprint(1)\n")
    assert request_for([str(ours), "worker"], {}, CWD)["script"] == str(ours)
    assert request_for([str(other), "worker"], {}, CWD) is None


def test_a_python_variable_read_at_interpreter_start_that_the_fork_cannot_apply_is_not_forked(monkeypatch):
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    command = [sys.executable, "-m", "app"]
    assert request_for(command, {"PYTHONHASHSEED": "0"}, CWD) is None
    assert request_for(command, {"PYTHONWARNINGS": "error"}, CWD) is None
    for honoured in ("PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"):
        assert request_for(command, {honoured: "1"}, CWD) is not None
    monkeypatch.setenv("PYTHONWARNINGS", "error")  # the zygote was started with it too: nothing differs
    assert request_for(command, {"PYTHONWARNINGS": "error", **os.environ}, CWD) is not None
