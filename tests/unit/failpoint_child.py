"""A tiny application process that calls failpoints on command, and the driver tests use for it.

Run as a script, it reads one JSON command per line on stdin and answers
one JSON line on stdout. ``ChildProcess`` starts it in its own session
(so ``kill group=True`` takes down only its group) and talks to it with
deadlines.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _call(name: str, context: dict[str, Any]) -> dict[str, Any]:
    from harness.failpoints import failpoint

    try:
        return {"value": failpoint(name, **context)}
    except BaseException as exc:  # noqa: BLE001 - report whatever the failpoint raised
        return {"raised": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": str(exc)}


def _handle(command: dict[str, Any]) -> dict[str, Any]:
    op = command["op"]
    if op == "call":
        return _call(command["name"], command.get("context", {}))
    if op == "loop":  # call repeatedly; count the calls that returned a value
        from harness.failpoints import failpoint

        fired = sum(failpoint(command["name"], i=i) is not None for i in range(command["count"]))
        return {"fired": fired}
    if op == "spawn_sleeper":  # a process in our group, for group kills
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        return {"pid": sleeper.pid}
    if op == "pid":
        return {"pid": os.getpid(), "pgid": os.getpgrp()}
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    for line in sys.stdin:
        reply = _handle(json.loads(line))
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


class ChildProcess:
    """Drives one child: ``send`` a command, ``receive`` its answer with a deadline."""

    def __init__(self, env: dict[str, str] | None, stderr_path: Path):
        full_env = {k: v for k, v in os.environ.items() if k != "JOBQUAKE_FAILPOINTS_DIR"}
        full_env.update(env or {})
        full_env["PYTHONPATH"] = str(REPO)
        self._stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env=full_env, start_new_session=True, text=True, bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)  # end of output: the child exited

    def send(self, **command: Any) -> None:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 10.0) -> dict[str, Any]:
        line = self._lines.get(timeout=timeout)
        if line is None:
            raise EOFError(f"child {self.proc.pid} exited with {self.proc.wait(5)}")
        return json.loads(line)

    def ask(self, timeout: float = 10.0, **command: Any) -> dict[str, Any]:
        self.send(**command)
        return self.receive(timeout)

    def has_answer(self) -> bool:
        return not self._lines.empty()

    def close(self) -> None:
        # its own session, so this group is the child and what it spawned; until we reap
        # the child its pid cannot be reused, so the group id still names our processes
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass  # broken pipe from a killed child
        self._stderr.close()


if __name__ == "__main__":
    main()
