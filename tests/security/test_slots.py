"""Connections that never log in cannot keep the harness from reading the verdict, and are cut quickly.

The attack: 70 connections to Postgres that send a login request and never
answer the password question each hold a connection slot; with more of them
than ``max_connections`` the app and the harness's own connection were kept
out for up to 60 s. The server listens on no TCP port now; where the app
reaches it through the fault proxy, that route holds fewer connections than
the server has slots, so the rest stay for the harness's direct socket, and
the server cuts a login that does not finish within 5 s.
"""
from __future__ import annotations

import json
import time
from typing import Iterator

import pytest

from harness.stack.postgres import AUTHENTICATION_TIMEOUT, RESERVED_CONNECTIONS
from harness.stack.stack import Stack
from tests.common.tiny import tiny_stack

pytestmark = pytest.mark.integration

STALL = """
import json, socket, struct, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
startup = b"user\\0postgres\\0database\\0postgres\\0\\0"
packet = struct.pack("!ii", 8 + len(startup), 196608) + startup
held, reset = [], 0
for _ in range(count):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(packet)
    try:
        answer = sock.recv(1)  # 'R': the server asks for the password, which never comes
    except OSError:
        answer = b""
    if answer == b"R":
        held.append(sock)
    else:
        reset += 1
        sock.close()
print(json.dumps({"holding": len(held)}), flush=True)
sys.stdin.read()  # until the harness has tried its own connection
started, open_ = time.monotonic(), list(held)
while open_ and time.monotonic() - started < 30:
    for sock in list(open_):
        sock.settimeout(0.05)
        try:
            if sock.recv(4096) == b"":
                open_.remove(sock)
        except socket.timeout:
            pass
        except OSError:
            open_.remove(sock)
print(json.dumps({"reset": reset, "cut_after": round(time.monotonic() - started, 2), "still_open": len(open_)}))
"""


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    made = tiny_stack(proxied="paidapi,postgres")  # the app reaches Postgres through the proxy's route
    made.start()
    yield made
    made.stop()


def test_stalled_logins_leave_the_harness_a_slot_and_are_cut_within_the_timeout(attacker, stack):
    limit = stack.postgres.max_connections - RESERVED_CONNECTIONS
    stalls = attacker.start(STALL, str(stack.proxy_ports["postgres"]), str(stack.postgres.max_connections + 10))
    try:
        first = json.loads(stalls.stdout.readline())
        assert first["holding"] <= limit, first  # the route stops short of the server's slots
        started = time.monotonic()
        with stack.postgres.connect() as conn:  # the harness, through its own socket, meanwhile
            assert conn.execute("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
                                ).fetchone()[0] >= 1
        assert time.monotonic() - started < 2, "the harness waited for a slot"
    finally:
        stalls.stdin.close()
        last = json.loads(stalls.stdout.readline() or "{}")
        stalls.wait(40)
    timeout = float(AUTHENTICATION_TIMEOUT.rstrip("s"))
    assert last["reset"] >= 10 and last["still_open"] == 0, last
    assert last["cut_after"] <= timeout + 2, f"stalled logins held their slots {last['cut_after']} s"
