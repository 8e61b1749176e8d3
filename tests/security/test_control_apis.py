"""The control APIs answer only the harness: another user's request is refused, anything planted is reported.

The attack: one request to the paid API's control routes (a mode for a job)
or to the fault proxy's API (a toxic, a new listener, a deleted route) from
another local user turns a failing run green, and nothing in the evidence
shows it. Both now need the session's token, which lives in the private run
folder; what gets set without the harness's clients (a leaked token, a real
Toxiproxy, which takes no token) is reported on the verdict, and the next
reset puts the session's routes, settings and empty rule tables back.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from harness.checks import run_checks
from harness.checks.interference import no_interference
from harness.evidence.collect import collect
from harness.paidapi.control import PaidAPIControl
from harness.proxy.client import ProxyAPIError, ProxyClient
from harness.stack.stack import Stack
from tests.common.runs import per_test_run
from tests.common.tiny import job_state, submit, tiny_stack
from harness._wait import wait_until

pytestmark = pytest.mark.integration

ATTACK = """
import json, sys, urllib.request
results = {}
for name, method, url, body in json.loads(sys.argv[1]):
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            results[name] = answer.status
    except urllib.error.HTTPError as exc:
        results[name] = exc.code
    except OSError as exc:
        results[name] = type(exc).__name__
print(json.dumps(results))
"""
READ_TOKEN = """
import sys
try:
    print(open(sys.argv[1]).read())
except OSError as exc:
    print(type(exc).__name__)
"""


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    made = tiny_stack()
    made.start()
    yield made
    made.stop()


def attacks(stack: Stack) -> list[tuple[str, str, str, object]]:
    paid, proxy = stack.paidapi.url + "/_jobquake", stack.proxy.url
    return [
        ("mode for a job", "POST", f"{paid}/modes", {"mode": "fail", "status": 500, "job_id": "j1"}),
        ("reset the ledger", "POST", f"{paid}/reset", None),
        ("read the ledger", "GET", f"{paid}/ledger", None),
        ("a toxic", "POST", f"{proxy}/proxies/redis/toxics", {"type": "latency", "attributes": {"latency": 1}}),
        ("a listener on 81", "POST", f"{proxy}/proxies", {"name": "x", "listen": "127.0.0.1:81", "upstream": "127.0.0.1:1"}),
        ("a listener on 127.0.0.2", "POST", f"{proxy}/proxies", {"name": "y", "listen": "127.0.0.2:0", "upstream": "127.0.0.1:1"}),
        ("delete a route", "DELETE", f"{proxy}/proxies/redis", None),
        ("reset the proxy", "POST", f"{proxy}/reset", None),
    ]


def test_another_users_control_requests_are_refused_and_counted(attacker, stack, tmp_path):
    with per_test_run(stack, tmp_path / "artifacts", "refused") as run:
        tried = attacker.python(ATTACK.replace("sys.argv[1]", repr(json.dumps(attacks(stack)))))
        assert tried.returncode == 0, tried.stderr
        assert set(json.loads(tried.stdout).values()) == {401}, tried.stdout
        assert run.proxy.interference() == [] and run.paidapi.interference() == []
        history, _snapshot = collect(run)
    refused = {e.data["surface"]: e.data["count"] for e in history if e.name == "refused"}
    assert refused == {"paidapi": 3, "proxy": 5}
    assert run_checks([no_interference], history, None).results[0].valid is True


def test_the_token_is_on_no_command_line_and_only_we_can_read_it(attacker, stack):
    for service in (stack.paidapi, stack.proxy):
        assert service.token not in Path(f"/proc/{service.pid}/cmdline").read_text()
        tried = attacker.python(READ_TOKEN.replace("sys.argv[1]", repr(str(service.token_path))))
        assert tried.stdout.strip() == "PermissionError", tried.stdout
        assert oct(service.token_path.stat().st_mode & 0o777) == "0o600"


def test_what_someone_else_sets_is_reported_and_the_next_reset_undoes_it(stack, tmp_path):
    # someone with the token but not the harness's clients: a leaked token, or a real Toxiproxy
    other_proxy = ProxyClient(stack.proxy.url, token=stack.proxy.token)
    other_paidapi = PaidAPIControl(stack.paidapi.url, token=stack.paidapi.token)
    with per_test_run(stack, tmp_path / "artifacts", "planted") as run:
        other_proxy.get_proxy("paidapi").add_toxic("latency", name="planted", attributes={"latency": 1})
        other_proxy.get_proxy("redis").destroy()
        other_paidapi.set_mode("fail", job_id="j1", status=500)
        other_paidapi.settings(time_scale=5.0)
        history, _snapshot = collect(run)
    result = run_checks([no_interference], history, None).results[0]
    assert result.valid is False, result.message
    said = "\n".join(v["what"] for v in result.details["violations"])
    for expected in ("toxic 'planted' (latency, downstream) on proxy 'paidapi'", "proxy 'redis' was deleted",
                     "mode rule", "setting time_scale was changed to 5.0"):
        assert expected in said, said
    with per_test_run(stack, tmp_path / "artifacts2", "after") as run:  # the reset put it all back
        assert run.proxy.interference() == [] and run.paidapi.interference() == []
        assert other_paidapi.modes() == [] and other_paidapi.settings()["time_scale"] == stack.config.time_scale
        submit(run, "after-reset")
        wait_until(lambda: job_state(run, "after-reset") == "done", timeout=20, what="the app through the redis route")


def test_even_with_the_token_the_proxy_listens_only_where_a_harness_would(stack):
    client = ProxyClient(stack.proxy.url, token=stack.proxy.token)
    for listen in ("127.0.0.1:81", "127.0.0.2:0", "0.0.0.0:0"):
        with pytest.raises(ProxyAPIError, match="HTTP 400"):
            client.create("elsewhere", "127.0.0.1:1", listen=listen)
