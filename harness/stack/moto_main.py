"""Serve moto's SQS and its control API (``/moto-api/``), and nothing else.

``python -m moto.server`` answers every AWS service moto has: each request
first goes through a dispatcher that works out, from the host, the
signature and the body, which service it is for, and each is logged on a
line of its own. The harness and the app only ever talk SQS to it, and the
harness resets it through ``/moto-api/reset``. Routed straight to moto's own
SQS and control apps, unlogged, a request costs the server about two thirds
of the CPU (4.5 against 6.9 ms for ``GetQueueAttributes`` on this machine's
2 cores): the consumers poll it every second, and the harness reads it
between tests, in every session at once during ``jobquake mutants --full``.

Only the standard library, werkzeug and moto are imported, the same moto
apps answer, and anything but SQS gets SQS's answer to an unknown action.

    python harness/stack/moto_main.py -H 127.0.0.1 -p PORT
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any, Callable, Iterable

CONTROL_PREFIX = "/moto-api"


def application() -> Callable[..., Iterable[bytes]]:
    """A WSGI app: ``/moto-api/...`` to moto's control app, every other path to its SQS app."""
    from moto.moto_server.werkzeug_app import create_backend_app

    sqs, control = create_backend_app("sqs"), create_backend_app("moto_api")

    def route(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        app = control if environ.get("PATH_INFO", "").startswith(CONTROL_PREFIX) else sqs
        return app(environ, start_response)

    return route


def request_handler() -> type:
    """moto's request handler (5.2 on: it keeps underscores in S3 metadata headers' names), or on an
    older moto werkzeug's own, which it extends: SQS sends no such header, so both serve it the same."""
    try:
        from moto.moto_server.werkzeug_app import MotoRequestHandler
    except ImportError:  # moto < 5.2
        from werkzeug.serving import WSGIRequestHandler

        return WSGIRequestHandler
    return MotoRequestHandler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    parser.add_argument("--fd", type=int, default=None,
                        help="serve on this listening socket, bound to -H:-p by the caller")
    args = parser.parse_args(argv)
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]  # run by path: never shadow `redis` & co
    os.environ.setdefault("MOTO_PORT", str(args.port))  # as moto's server: URLs moto builds name this port

    from werkzeug.serving import make_server

    class Unlogged(request_handler()):  # type: ignore[misc]
        def log_request(self, *args: Any, **kwargs: Any) -> None:
            """One line per request is most of the log and a share of the CPU: errors are still logged."""

    server = make_server(args.host, args.port, application(), threaded=True, request_handler=Unlogged, fd=args.fd)
    # as moto's own server: a stop or an interrupt ends the process with status 0 (serve_forever runs here)
    for stop in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop, lambda *_: sys.exit(0))
    print(f" * Running on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
