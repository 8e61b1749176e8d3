"""The control API the harness drives the fake provider with (under ``/_jobquake``).

``GET health``, ``GET stats``, ``GET ledger``, ``GET wait`` (long-poll),
``GET|POST|DELETE modes``, ``DELETE modes/{id}``, ``GET|POST gates``,
``GET gates/{id}/held`` (long-poll), ``POST gates/{id}/release``,
``DELETE gates/{id}``, ``POST reset``, ``GET|POST settings``.

Call filters (``ledger``, ``wait``): ``job_id``, ``step``, ``attempt``,
``route``, ``after`` (call ids above it) and ``state``: a record state, or
``billed``, or ``any``. A long-poll answers 200 with the first matching
record as soon as there is one, or 408 after ``timeout`` seconds.
"""
from __future__ import annotations

from typing import Any

from aiohttp import web

from harness.errors import ConfigError
from harness.paidapi._http import PROVIDER, REFUSED, check_fields, json_body, query_number
from harness.paidapi.ledger import STATE_FILTERS, CallRecord

DEFAULT_WAIT = 10.0  # seconds a long-poll waits when the caller gives no timeout
MAX_WAIT = 600.0


def control_routes(prefix: str) -> list[web.RouteDef]:
    """Every control route under ``prefix``."""
    rule = f"{prefix}/modes/{{id:\\d+}}"
    gate = f"{prefix}/gates/{{id:\\d+}}"
    return [
        web.get(f"{prefix}/health", health),
        web.get(f"{prefix}/stats", stats),
        web.get(f"{prefix}/ledger", ledger),
        web.get(f"{prefix}/wait", wait_for_call),
        web.get(f"{prefix}/modes", list_modes),
        web.post(f"{prefix}/modes", add_mode),
        web.delete(f"{prefix}/modes", clear_modes),
        web.delete(rule, remove_mode),
        web.get(f"{prefix}/gates", list_gates),
        web.post(f"{prefix}/gates", add_gate),
        web.get(f"{gate}/held", wait_gate_held),
        web.post(f"{gate}/release", release_gate),
        web.delete(gate, remove_gate),
        web.post(f"{prefix}/reset", reset),
        web.get(f"{prefix}/settings", get_settings),
        web.post(f"{prefix}/settings", post_settings),
    ]


# -- calls -------------------------------------------------------------------

async def health(request: web.Request) -> web.Response:
    """Liveness probe."""
    return web.json_response({"ok": True})


async def stats(request: web.Request) -> web.Response:
    """Open calls now, the most open at once, calls and billed calls since reset; ``refused``:
    how many control requests came without the session's token since the server started."""
    return web.json_response({**request.app[PROVIDER].stats(), "refused": len(request.app[REFUSED])})


async def ledger(request: web.Request) -> web.Response:
    """The call records matching the query's filters, oldest first."""
    records = request.app[PROVIDER].ledger.records(**_call_filters(request.query))
    return web.json_response([r.to_dict() for r in records])


async def wait_for_call(request: web.Request) -> web.Response:
    """Long-poll until a call matches the filters."""
    filters = _call_filters(request.query)
    book = request.app[PROVIDER].ledger
    wanted = {k: v for k, v in filters.items() if v is not None}
    return await _long_poll(request, lambda: next(iter(book.records(**filters)), None),
                            f"no call matching {wanted}")


# -- modes and gates ---------------------------------------------------------

async def list_modes(request: web.Request) -> web.Response:
    """The mode rules, oldest first."""
    return web.json_response([r.to_dict() for r in request.app[PROVIDER].modes.rules()])


async def add_mode(request: web.Request) -> web.Response:
    """Add a rule from the JSON body (see ``modes.py``); returns it with its ``rule_id``."""
    rule = request.app[PROVIDER].modes.add(await json_body(request))
    return web.json_response(rule.to_dict(), status=201)


async def remove_mode(request: web.Request) -> web.Response:
    """Remove a rule; the calls it hangs are answered 503."""
    return _found(request.app[PROVIDER].modes.remove(_id(request)), "rule", request)


async def clear_modes(request: web.Request) -> web.Response:
    """Remove every rule."""
    request.app[PROVIDER].modes.clear()
    return web.json_response({"ok": True})


async def list_gates(request: web.Request) -> web.Response:
    """The gates, oldest first."""
    return web.json_response([g.to_dict() for g in request.app[PROVIDER].gates.gates()])


async def add_gate(request: web.Request) -> web.Response:
    """Add a closed gate matching the body's ``job_id`` / ``step`` / ``route``."""
    body = await json_body(request)
    check_fields(body, {"job_id", "step", "route"}, "gate")
    selectors = {k: None if v is None else str(v) for k, v in body.items()}
    return web.json_response(request.app[PROVIDER].gates.add(**selectors).to_dict(), status=201)


async def wait_gate_held(request: web.Request) -> web.Response:
    """Long-poll until the gate has held a call; answers that call's record."""
    provider = request.app[PROVIDER]
    gate = provider.gates.get(_id(request))
    if gate is None:
        return _found(None, "gate", request)
    return await _long_poll(
        request,
        lambda: next((r for r in provider.ledger.records() if r.call_id in gate.held), None),
        f"gate {gate.gate_id} held no call",
    )


async def release_gate(request: web.Request) -> web.Response:
    """Open a gate for good: held calls go on, later ones pass."""
    return _found(request.app[PROVIDER].gates.release(_id(request)), "gate", request)


async def remove_gate(request: web.Request) -> web.Response:
    """Release and remove a gate."""
    return _found(request.app[PROVIDER].gates.remove(_id(request)), "gate", request)


# -- reset and settings ------------------------------------------------------

async def reset(request: web.Request) -> web.Response:
    """Clear ledger, rules, gates and keys; held and hung calls are answered 503."""
    request.app[PROVIDER].reset()
    return web.json_response({"ok": True})


async def get_settings(request: web.Request) -> web.Response:
    """``time_scale``, ``seed`` and ``profile``."""
    return web.json_response(request.app[PROVIDER].settings())


async def post_settings(request: web.Request) -> web.Response:
    """Change any of ``time_scale``, ``seed``, ``profile``, ``prices``, ``call_key``,
    ``call_key_header``; answers the new settings."""
    body = await json_body(request)
    check_fields(body, {"time_scale", "seed", "profile", "prices", "call_key", "call_key_header"},
                 "settings")
    provider = request.app[PROVIDER]
    provider.configure(**body)
    return web.json_response(provider.settings())


# -- helpers -----------------------------------------------------------------

async def _long_poll(request: web.Request, find: Any, nothing: str) -> web.Response:
    timeout = query_number(request.query, "timeout", float)
    timeout = DEFAULT_WAIT if timeout is None else min(max(timeout, 0.0), MAX_WAIT)
    record: CallRecord | None = await request.app[PROVIDER].ledger.wait_for(find, timeout)
    if record is None:
        return web.json_response({"error": f"{nothing} within {timeout:g}s"}, status=408)
    return web.json_response(record.to_dict())


def _call_filters(query: Any) -> dict[str, Any]:
    state = query.get("state", "any")
    if state not in STATE_FILTERS:
        raise ConfigError(f"state must be one of {STATE_FILTERS}, got {state!r}", key="state")
    filters: dict[str, Any] = {name: query.get(name) for name in ("job_id", "step", "route")}
    filters["state"] = state
    for name in ("attempt", "after"):
        filters[name] = query_number(query, name, int)
    return filters


def _id(request: web.Request) -> int:
    return int(request.match_info["id"])  # the route pattern admits digits only


def _found(item: Any, what: str, request: web.Request) -> web.Response:
    if item is None:
        return web.json_response({"error": f"no {what} {request.match_info['id']}"}, status=404)
    return web.json_response(item.to_dict())
