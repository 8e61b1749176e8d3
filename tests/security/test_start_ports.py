"""Taking a port between a server's start and its bind no longer fails the start.

The attack: a server's port is on its command line, which every local user
can read, from the moment it is started until it binds; another user who
binds it first made the start fail (Postgres). The harness now binds the
ports of its own servers before starting them and hands them the socket;
Redis and Postgres bind no port at all. The watcher here binds every port
number it sees on a command line of ours, as fast as it can, while a stack
starts: the stack starts anyway, and none of its addresses is the watcher's.
"""
from __future__ import annotations

import json
import os

import pytest

from harness._wait import wait_until
from harness.run import Run
from tests.common.tiny import job_state, submit, tiny_stack

pytestmark = pytest.mark.integration

WATCH = """
import json, os, re, socket, sys, threading
uid = int(sys.argv[1])
taken, seen, stop = {}, set(), threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
while not stop.is_set():
    for pid in os.listdir("/proc"):
        try:
            if not pid.isdigit() or os.stat(f"/proc/{pid}").st_uid not in (uid, 0):
                continue
            words = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace").split("\\0")
        except OSError:
            continue
        for word in words:
            for number in re.findall(r"(?<![0-9])(2[0-9]{4}|3[01][0-9]{3})(?![0-9])", word):
                port = int(number)
                if port in seen:
                    continue
                seen.add(port)
                sock = socket.socket()
                try:
                    sock.bind(("127.0.0.1", port))
                    sock.listen(8)
                    taken[port] = sock
                except OSError:
                    sock.close()
print(json.dumps(sorted(taken)))
"""


def test_a_watcher_binding_every_port_on_our_command_lines_cannot_stop_a_stack(attacker, tmp_path):
    watcher = attacker.start(WATCH, str(os.geteuid()))
    stack = tiny_stack()
    try:
        stack.start()
        stack.reset()
        run = Run(stack, stack.config, tmp_path / "artifacts", "watched")
        try:
            submit(run, "watched")
            wait_until(lambda: job_state(run, "watched") == "done", timeout=30, what="the app's job through it all")
        finally:
            run.close()
        ours = {svc.port for svc in stack.infrastructure} | set(stack.proxy_ports.values())
    finally:
        watcher.stdin.close()
        taken = set(json.loads(watcher.stdout.read() or "[]"))
        watcher.wait(10)
        stack.stop()
    listening = ours - {stack.redis.port, stack.postgres.port}  # those two name only private sockets
    assert taken & listening == set(), f"another user holds addresses of the stack: {sorted(taken & listening)}"
