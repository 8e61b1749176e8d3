"""Toxiproxy's HTTP API over a ProxyCollection, with aiohttp.web.

Routes, status codes and bodies are Toxiproxy's: proxies are created with
201, toxics with 200, deletions and /reset answer 204, errors are
``{"error": message, "status": code}``. As in Toxiproxy, requests from
browsers are refused (403), so a web page cannot drive the proxy. Unlike
Toxiproxy's, when the server has a token every request but ``GET /version``
needs it (401 otherwise: ``harness._control_token``), so another local user
cannot either; ``/version`` counts the refusals (``jobquake_refused``).
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from harness._browser import browser_mark
from harness._control_token import HEADER, authorised
from harness.proxy.fields import ApiError
from harness.proxy.server import ProxyCollection, TcpProxy
from harness.proxy.toxics import BAD_BODY, InvalidToxicError

log = logging.getLogger("harness.proxy")

VERSION = "jobquake-0.1.0 (Toxiproxy API 2)"
_PROXIES = web.AppKey("proxies", ProxyCollection)
_TOKEN = web.AppKey("token", str)
_REFUSED = web.AppKey("refused", list)  # "METHOD path from peer" of each request refused for want of the token
REFUSED_FIELD = "jobquake_refused"  # as harness.proxy.client names it (the client does not import the server)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def build_app(proxies: ProxyCollection, token: str | None = None) -> web.Application:
    """The aiohttp application serving the API for ``proxies`` (to holders of ``token``, when given)."""
    app = web.Application(middlewares=[_log_call, _error_body])
    app[_PROXIES] = proxies
    app[_TOKEN] = token
    app[_REFUSED] = []
    app.router.add_post("/reset", _reset)
    app.router.add_post("/populate", _populate)
    app.router.add_get("/version", _version)
    app.router.add_get("/proxies", _proxy_index)
    app.router.add_post("/proxies", _proxy_create)
    app.router.add_get("/proxies/{proxy}", _proxy_show)
    app.router.add_route("POST", "/proxies/{proxy}", _proxy_update)
    app.router.add_route("PATCH", "/proxies/{proxy}", _proxy_update)
    app.router.add_delete("/proxies/{proxy}", _proxy_delete)
    app.router.add_get("/proxies/{proxy}/toxics", _toxic_index)
    app.router.add_post("/proxies/{proxy}/toxics", _toxic_create)
    app.router.add_get("/proxies/{proxy}/toxics/{toxic}", _toxic_show)
    app.router.add_route("POST", "/proxies/{proxy}/toxics/{toxic}", _toxic_update)
    app.router.add_route("PATCH", "/proxies/{proxy}/toxics/{toxic}", _toxic_update)
    app.router.add_delete("/proxies/{proxy}/toxics/{toxic}", _toxic_delete)
    return app


def error_response(status: int, message: str) -> web.Response:
    return web.json_response({"error": message, "status": status}, status=status)


@web.middleware
async def _error_body(request: web.Request, handler: Handler) -> web.StreamResponse:
    if browser_mark(request.headers):  # Toxiproxy checks the user agent only; Origin too here
        return error_response(403, "User agent not allowed")
    if request.path != "/version" and not authorised(request.headers, request.app[_TOKEN]):
        request.app[_REFUSED].append(f"{request.method} {request.path} from {request.remote}")
        log.warning("api %s %s refused: no session token", request.method, request.path)
        return error_response(401, f"the proxy's API needs the session's token ({HEADER} header)")
    try:
        return await handler(request)
    except (ApiError, InvalidToxicError) as exc:
        status = exc.status
        return error_response(status, exc.message if isinstance(exc, ApiError) else str(exc))
    except web.HTTPException as exc:  # unknown route, wrong method
        if exc.status < 400:
            raise
        return error_response(exc.status, exc.reason.lower())
    except Exception as exc:  # a bug: still answer in the API's error shape
        log.exception("api %s %s failed", request.method, request.path)
        return error_response(500, f"internal error: {exc}")


@web.middleware
async def _log_call(request: web.Request, handler: Handler) -> web.StreamResponse:
    started = time.perf_counter()
    response = await handler(request)
    elapsed_ms = (time.perf_counter() - started) * 1000
    log.info("api %s %s -> %d (%.1f ms)", request.method, request.path, response.status, elapsed_ms)
    return response


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ApiError(400, f"{BAD_BODY}: {exc}") from exc


def _proxies(request: web.Request) -> ProxyCollection:
    return request.app[_PROXIES]


def _proxy(request: web.Request) -> TcpProxy:
    return _proxies(request).get(request.match_info["proxy"])


async def _version(request: web.Request) -> web.Response:
    return web.json_response({"version": VERSION, REFUSED_FIELD: len(request.app[_REFUSED])})


async def _reset(request: web.Request) -> web.Response:
    await _proxies(request).reset()
    return web.Response(status=204)


async def _populate(request: web.Request) -> web.Response:
    applied, error = await _proxies(request).populate(await _body(request))
    body: dict[str, Any] = {"proxies": [proxy.to_json() for proxy in applied]}
    if error is not None:
        body.update(error=error.message, status=error.status)
        return web.json_response(body, status=error.status)
    return web.json_response(body, status=201)


async def _proxy_index(request: web.Request) -> web.Response:
    proxies = _proxies(request).all()
    return web.json_response({name: proxy.to_json() for name, proxy in proxies.items()})


async def _proxy_create(request: web.Request) -> web.Response:
    proxy = await _proxies(request).create(await _body(request))
    return web.json_response(proxy.to_json(), status=201)


async def _proxy_show(request: web.Request) -> web.Response:
    return web.json_response(_proxy(request).to_json())


async def _proxy_update(request: web.Request) -> web.Response:
    name = request.match_info["proxy"]
    _proxies(request).get(name)  # 404 before a body error, as in Toxiproxy
    proxy = await _proxies(request).update(name, await _body(request))
    return web.json_response(proxy.to_json())


async def _proxy_delete(request: web.Request) -> web.Response:
    await _proxies(request).remove(request.match_info["proxy"])
    return web.Response(status=204)


async def _toxic_index(request: web.Request) -> web.Response:
    return web.json_response(_proxy(request).to_json()["toxics"])


async def _toxic_create(request: web.Request) -> web.Response:
    proxy = _proxy(request)
    toxic = proxy.add_toxic(await _body(request))
    return web.json_response(toxic.to_json())


async def _toxic_show(request: web.Request) -> web.Response:
    return web.json_response(_proxy(request).get_toxic(request.match_info["toxic"]).to_json())


async def _toxic_update(request: web.Request) -> web.Response:
    proxy = _proxy(request)
    toxic = proxy.update_toxic(request.match_info["toxic"], await _body(request))
    return web.json_response(toxic.to_json())


async def _toxic_delete(request: web.Request) -> web.Response:
    _proxy(request).remove_toxic(request.match_info["toxic"])
    return web.Response(status=204)
